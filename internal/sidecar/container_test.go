package sidecar

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/golden"
	"github.com/otelop/otelop/internal/manifests/collector"
)

const cr = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: sidecar
  namespace: apps
spec:
  mode: sidecar
  env:
    - name: USER_ENV
      value: "x"
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      otlp:
        endpoint: gateway:4317
    extensions:
      health_check: {}
    service:
      extensions: [health_check]
      pipelines:
        traces:
          receivers: [otlp]
          exporters: [otlp]
`

func load(t *testing.T, opts collector.Options) v1beta1.OpenTelemetryCollector {
	var col v1beta1.OpenTelemetryCollector
	if err := yaml.UnmarshalStrict([]byte(cr), &col); err != nil {
		t.Fatal(err)
	}
	if err := collector.ApplyDefaults(&col, opts); err != nil {
		t.Fatal(err)
	}
	return col
}

func pod() corev1.Pod {
	yes := true
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "app-1", Namespace: "apps",
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "app-5d9f", UID: "rs-uid", Controller: &yes}},
	}}
}

func TestContainerGolden(t *testing.T) {
	for _, native := range []bool{false, true} {
		name := "container.golden.yaml"
		if native {
			name = "container-native.golden.yaml"
		}
		t.Run(name, func(t *testing.T) {
			opts := collector.DefaultOptions()
			opts.NativeSidecars = native
			c, err := Container(load(t, opts), opts, pod())
			if err != nil {
				t.Fatal(err)
			}
			got, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name, got)
		})
	}
}

func TestContainer(t *testing.T) {
	g := NewWithT(t)
	opts := collector.DefaultOptions()
	c, err := Container(load(t, opts), opts, pod())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Name).To(Equal("otc-container"))
	// A pod of the collector's namespace reads the config from the mounted ConfigMap.
	g.Expect(c.Args).To(Equal([]string{"--config=/conf/collector.yaml"}))
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
		g.Expect(e.Value).NotTo(ContainSubstring("gateway:4317"), "the config is in no variable")
	}
	g.Expect(names).To(Equal([]string{"USER_ENV", "POD_NAME", "GOMEMLIMIT", "GOMAXPROCS",
		PodNameEnv, PodUIDEnv, NodeNameEnv, ResourceAttributesEnv}))
	g.Expect(c.Env[len(c.Env)-1].Value).To(Equal("k8s.namespace.name=apps,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME)," +
		"k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID)," +
		"k8s.replicaset.name=app-5d9f,k8s.replicaset.uid=rs-uid"))
	g.Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "otc-internal", MountPath: "/conf"}}))
	g.Expect(c.RestartPolicy).To(BeNil())

	// A user-set OTEL_RESOURCE_ATTRIBUTES is kept and not extended.
	col := load(t, opts)
	col.Spec.Env = append(col.Spec.Env, corev1.EnvVar{Name: ResourceAttributesEnv, Value: "a=b"})
	c, err = Container(col, opts, pod())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: ResourceAttributesEnv, Value: "a=b"}))
	g.Expect(c.Env).NotTo(ContainElement(HaveField("Name", PodNameEnv)))

	// Native sidecars restart always and use the readiness probe for startup.
	opts.NativeSidecars = true
	c, err = Container(load(t, opts), opts, pod())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*c.RestartPolicy).To(Equal(corev1.ContainerRestartPolicyAlways))
	g.Expect(c.StartupProbe).NotTo(BeNil())
}

// A pod of another namespace (one the collector allows) cannot mount the collector's ConfigMap:
// it gets the config in OTEL_CONFIG, as upstream's sidecars do.
func TestContainerOtherNamespace(t *testing.T) {
	g := NewWithT(t)
	opts := collector.DefaultOptions()
	p := pod()
	p.Namespace = "other"
	col := load(t, opts)
	g.Expect(ByReference(col, p)).To(BeFalse())
	c, err := Container(col, opts, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Args).To(Equal([]string{"--config=env:OTEL_CONFIG"}))
	g.Expect(c.VolumeMounts).To(BeEmpty())
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
	}
	g.Expect(names).To(Equal([]string{"USER_ENV", "POD_NAME", "GOMEMLIMIT", "GOMAXPROCS", ConfigEnv,
		PodNameEnv, PodUIDEnv, NodeNameEnv, ResourceAttributesEnv}))
	want, err := collector.ConfigYAML(col)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Env[4].Value).To(Equal(want))
}

// ConfigVolume names the ConfigMap the collector builder generates for the sidecar collector,
// and that ConfigMap holds the config the sidecar of another namespace gets inline.
func TestConfigVolumeNamesTheBuiltConfigMap(t *testing.T) {
	g := NewWithT(t)
	opts := collector.DefaultOptions()
	col := load(t, opts)
	v, err := ConfigVolume(col)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.Name).To(Equal("otc-internal"))
	objs, err := collector.Build(col, opts)
	g.Expect(err).NotTo(HaveOccurred())
	var cms []*corev1.ConfigMap
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			cms = append(cms, cm)
		}
	}
	g.Expect(cms).To(HaveLen(1))
	g.Expect(v.ConfigMap.Name).To(Equal(cms[0].Name))
	g.Expect(v.ConfigMap.Items).To(Equal([]corev1.KeyToPath{{Key: "collector.yaml", Path: "collector.yaml"}}))
	want, err := collector.ConfigYAML(col)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cms[0].Data).To(Equal(map[string]string{"collector.yaml": want}))
}
