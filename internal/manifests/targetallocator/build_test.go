package targetallocator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/golden"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

func loadInto(t testing.TB, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func loadTA(t testing.TB, name string) v1alpha1.TargetAllocator {
	t.Helper()
	var ta v1alpha1.TargetAllocator
	loadInto(t, name, &ta)
	return ta
}

func loadCollector(t testing.TB) *v1beta1.OpenTelemetryCollector {
	t.Helper()
	col := &v1beta1.OpenTelemetryCollector{}
	loadInto(t, "collector.yaml", col)
	return col
}

func TestBuildGolden(t *testing.T) {
	opts := DefaultOptions()
	opts.ProxyEnv = []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}}
	opts.PrometheusCRDs = true
	for _, tc := range []struct {
		name      string
		collector bool
	}{{"standalone", false}, {"full", true}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var col *v1beta1.OpenTelemetryCollector
			if tc.collector {
				col = loadCollector(t)
			}
			objs, err := Build(loadTA(t, tc.name+".yaml"), col, opts)
			g.Expect(err).NotTo(HaveOccurred())
			out, err := manifestutils.Encode(objs, "yaml")
			g.Expect(err).NotTo(HaveOccurred())
			golden.Check(t, tc.name+".golden.yaml", out)
		})
	}
}

// TestConfigFileLayout checks the file byte for byte against the layout the target allocator
// binary has always been given: lower-case selector field names with empty lists written out,
// sorted keys, the collector's scrape configs with "$$" unescaped and its global section.
func TestConfigFileLayout(t *testing.T) {
	g := NewWithT(t)
	ta := v1alpha1.TargetAllocator{Spec: v1alpha1.TargetAllocatorSpec{
		AllocationStrategy: v1beta1.TargetAllocatorAllocationStrategyPerNode,
		FilterStrategy:     v1beta1.TargetAllocatorFilterStrategyRelabelConfig,
	}}
	got, err := ConfigFile(ta, loadCollector(t), DefaultOptions())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(`allocation_strategy: per-node
collector_selector:
  matchlabels:
    app.kubernetes.io/component: opentelemetry-collector
    app.kubernetes.io/instance: observability.cluster
    app.kubernetes.io/managed-by: opentelemetry-operator
    app.kubernetes.io/part-of: opentelemetry
  matchexpressions: []
config:
  global:
    scrape_interval: 45s
  scrape_configs:
  - job_name: pods
    kubernetes_sd_configs:
    - role: pod
    relabel_configs:
    - replacement: $1
      source_labels:
      - __meta_kubernetes_pod_name
      target_label: pod
filter_strategy: relabel-config
`))

	// Without a collector and without scrape configs: a null selector and no config section.
	got, err = ConfigFile(ta, nil, DefaultOptions())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal("allocation_strategy: per-node\ncollector_selector: null\nfilter_strategy: relabel-config\n"))
}

func find[T client.Object](objs []client.Object) T {
	var zero T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			return v
		}
	}
	return zero
}

func TestBuild(t *testing.T) {
	kinds := func(objs []client.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
		}
		return out
	}
	file := func(g Gomega, objs []client.Object) map[string]any {
		cm := find[*corev1.ConfigMap](objs)
		g.Expect(cm).NotTo(BeNil())
		var m map[string]any
		g.Expect(yaml.Unmarshal([]byte(cm.Data[ConfigMapKey]), &m)).To(Succeed())
		return m
	}
	tests := []struct {
		name      string
		mutate    func(*v1alpha1.TargetAllocator, *v1beta1.OpenTelemetryCollector, *Options)
		collector bool
		check     func(Gomega, []client.Object)
	}{{
		name: "objects, names and labels",
		check: func(g Gomega, objs []client.Object) {
			g.Expect(kinds(objs)).To(Equal([]string{"ConfigMap/standalone-targetallocator", "ServiceAccount/standalone-targetallocator",
				"Role/standalone-targetallocator", "RoleBinding/standalone-targetallocator", "Service/standalone-targetallocator", "Deployment/standalone-targetallocator", "PodDisruptionBudget/standalone-targetallocator"}))
			for _, o := range objs {
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "opentelemetry-operator"), o.GetName())
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/component", "opentelemetry-targetallocator"))
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/instance", "observability.standalone"))
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/version", "latest"), "upstream: spec.image empty means latest")
				g.Expect(o.GetOwnerReferences()).To(BeEmpty())
			}
		},
	}, {
		name: "deployment: container, port, probes, config volume, selector",
		check: func(g Gomega, objs []client.Object) {
			d := find[*appsv1.Deployment](objs)
			g.Expect(d.Spec.Selector.MatchLabels).To(HaveKeyWithValue("app.kubernetes.io/name", "standalone-targetallocator"))
			g.Expect(d.Spec.Template.Labels).To(Equal(d.Labels))
			pod := d.Spec.Template.Spec
			g.Expect(pod.ServiceAccountName).To(Equal("standalone-targetallocator"))
			c := pod.Containers[0]
			g.Expect(c.Name).To(Equal("ta-container"))
			g.Expect(c.Image).To(Equal(DefaultImage))
			g.Expect(c.Ports).To(Equal([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}))
			g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/livez"))
			g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
			g.Expect(c.VolumeMounts[0]).To(Equal(corev1.VolumeMount{Name: "ta-internal", MountPath: "/conf"}))
			g.Expect(pod.Volumes[0].ConfigMap.Name).To(Equal("standalone-targetallocator"))
			g.Expect(c.Env[0].Name).To(Equal("OTELCOL_NAMESPACE"))
		},
	}, {
		name: "service: 80 targetallocation to the http port, same selector as the deployment",
		check: func(g Gomega, objs []client.Object) {
			svc := find[*corev1.Service](objs)
			g.Expect(svc.Spec.Ports).To(HaveLen(1))
			g.Expect(svc.Spec.Ports[0].Name).To(Equal("targetallocation"))
			g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(80)))
			g.Expect(svc.Spec.Ports[0].TargetPort.String()).To(Equal("http"))
			g.Expect(svc.Spec.Selector).To(Equal(find[*appsv1.Deployment](objs).Spec.Selector.MatchLabels))
		},
	}, {
		name: "no ServiceAccount when spec.serviceAccount is set",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, _ *Options) {
			ta.Spec.ServiceAccount = "mine"
		},
		check: func(g Gomega, objs []client.Object) {
			g.Expect(find[*corev1.ServiceAccount](objs)).To(BeNil())
			g.Expect(find[*appsv1.Deployment](objs).Spec.Template.Spec.ServiceAccountName).To(Equal("mine"))
		},
	}, {
		name: "no PodDisruptionBudget with least-weighted",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, _ *Options) {
			ta.Spec.AllocationStrategy = v1beta1.TargetAllocatorAllocationStrategyLeastWeighted
		},
		check: func(g Gomega, objs []client.Object) {
			g.Expect(find[*policyv1.PodDisruptionBudget](objs)).To(BeNil())
		},
	}, {
		name: "NetworkPolicy when enabled; ServiceMonitor only with the Prometheus CRDs",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, _ *Options) {
			on := true
			ta.Spec.NetworkPolicy.Enabled = &on
			ta.Spec.Observability.Metrics.EnableMetrics = true
		},
		check: func(g Gomega, objs []client.Object) {
			np := find[*networkingv1.NetworkPolicy](objs)
			g.Expect(np).NotTo(BeNil())
			g.Expect(np.Name).To(Equal("standalone-targetallocator-networkpolicy"))
			g.Expect(np.Spec.Ingress[0].Ports[0].Port.IntValue()).To(Equal(8080))
			g.Expect(kinds(objs)).NotTo(ContainElement(HavePrefix("ServiceMonitor/")))
		},
	}, {
		name: "collector: selector, spec scrape configs first, collector's unescaped, spec.global wins",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, _ *Options) {
			ta.Spec.GlobalConfig = v1beta1.AnyConfig{Object: map[string]any{"scrape_interval": "5s"}}
		},
		collector: true,
		check: func(g Gomega, objs []client.Object) {
			f := file(g, objs)
			g.Expect(f["collector_selector"]).To(HaveKeyWithValue("matchlabels", HaveKeyWithValue("app.kubernetes.io/instance", "observability.cluster")))
			cfg := f["config"].(map[string]any)
			g.Expect(cfg["global"]).To(Equal(map[string]any{"scrape_interval": "5s"}))
			jobs := cfg["scrape_configs"].([]any)
			g.Expect(jobs).To(HaveLen(2))
			g.Expect(jobs[0]).To(HaveKeyWithValue("job_name", "kubelet"))
			g.Expect(jobs[1]).To(HaveKeyWithValue("job_name", "pods"))
			g.Expect(cmText(objs)).To(ContainSubstring("replacement: $1\n"))
		},
	}, {
		name: "a collector whose prometheus receiver config is not an object is an error",
		mutate: func(_ *v1alpha1.TargetAllocator, col *v1beta1.OpenTelemetryCollector, _ *Options) {
			col.Spec.Config.Receivers.Object["prometheus"] = map[string]any{"config": map[string]any{"scrape_configs": "nope"}}
		},
		collector: true,
	}, {
		name: "fallback gate, prometheus CR and grace period",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, o *Options) {
			o.FallbackStrategy = true
			ta.Spec.PrometheusCR.Enabled = true
		},
		check: func(g Gomega, objs []client.Object) {
			f := file(g, objs)
			g.Expect(f).To(HaveKeyWithValue("allocation_fallback_strategy", "consistent-hashing"))
			g.Expect(f).To(HaveKeyWithValue("collector_not_ready_grace_period", "30s"))
			g.Expect(f["prometheus_cr"]).To(HaveKeyWithValue("enabled", true))
			g.Expect(f["prometheus_cr"]).To(HaveKeyWithValue("service_monitor_selector", BeNil()))
		},
	}, {
		name: "user's app.kubernetes.io/name label selects the pods",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, _ *Options) {
			ta.Labels = map[string]string{"app.kubernetes.io/name": "my-ta"}
		},
		check: func(g Gomega, objs []client.Object) {
			g.Expect(find[*appsv1.Deployment](objs).Spec.Selector.MatchLabels).To(HaveKeyWithValue("app.kubernetes.io/name", "my-ta"))
		},
	}, {
		name: "long names are truncated to a DNS label",
		mutate: func(ta *v1alpha1.TargetAllocator, _ *v1beta1.OpenTelemetryCollector, _ *Options) {
			ta.Name = strings.Repeat("a", 60)
			on := true
			ta.Spec.NetworkPolicy.Enabled = &on
		},
		check: func(g Gomega, objs []client.Object) {
			for _, o := range objs {
				g.Expect(len(o.GetName())).To(BeNumerically("<=", 63))
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ta, opts := loadTA(t, "standalone.yaml"), DefaultOptions()
			var col *v1beta1.OpenTelemetryCollector
			if tt.collector {
				col = loadCollector(t)
			}
			if tt.mutate != nil {
				tt.mutate(&ta, col, &opts)
			}
			objs, err := Build(ta, col, opts)
			if tt.check == nil {
				g.Expect(err).To(MatchError(ContainSubstring("spec.config.receivers.prometheus.config.scrape_configs")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, objs)
		})
	}
}

func cmText(objs []client.Object) string {
	return find[*corev1.ConfigMap](objs).Data[ConfigMapKey]
}

// TestConfigChangeRollsPod: the pod template's hash follows the file, and nothing else moves it.
func TestConfigChangeRollsPod(t *testing.T) {
	g := NewWithT(t)
	col := loadCollector(t)
	hashOf := func(ta v1alpha1.TargetAllocator) string {
		objs, err := Build(ta, col, DefaultOptions())
		g.Expect(err).NotTo(HaveOccurred())
		h := find[*appsv1.Deployment](objs).Spec.Template.Annotations[ConfigHashAnnotation]
		want, err := HashOf(ta, col, DefaultOptions())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(h).To(Equal(want))
		return h
	}
	ta := loadTA(t, "standalone.yaml")
	h0 := hashOf(ta)
	ta.Spec.NodeSelector = map[string]string{"a": "b"}
	g.Expect(hashOf(ta)).To(Equal(h0))
	col.Spec.Config.Receivers.Object["prometheus"].(map[string]any)["config"].(map[string]any)["global"] = map[string]any{"scrape_interval": "1m"}
	g.Expect(hashOf(ta)).NotTo(Equal(h0))
}

// TestBuildDoesNotMutateInput guards against writing to the resource's or the collector's maps
// and slices.
func TestBuildDoesNotMutateInput(t *testing.T) {
	g := NewWithT(t)
	ta := loadTA(t, "full.yaml")
	ta.Spec.Env = append(make([]corev1.EnvVar, 0, 8), ta.Spec.Env...)
	col := loadCollector(t)
	before, colBefore := ta.DeepCopy(), col.DeepCopy()
	_, err := Build(ta, col, DefaultOptions())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ta).To(Equal(*before))
	g.Expect(col).To(Equal(colBefore))
	g.Expect(ta.Spec.Env[:cap(ta.Spec.Env)][1]).To(Equal(corev1.EnvVar{}), "spec.env backing array was written")
}
