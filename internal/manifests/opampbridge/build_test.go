package opampbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/golden"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	bridgeconfig "github.com/otelop/otelop/internal/opampbridge/config"
)

func load(t testing.TB, name string) v1alpha1.OpAMPBridge {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var br v1alpha1.OpAMPBridge
	if err := yaml.UnmarshalStrict(b, &br); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return br
}

func TestBuildGolden(t *testing.T) {
	opts := DefaultOptions()
	opts.ProxyEnv = []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}}
	for _, name := range []string{"minimal", "full", "secured"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			objs, err := Build(load(t, name+".yaml"), opts)
			g.Expect(err).NotTo(HaveOccurred())
			out, err := manifestutils.Encode(objs, "yaml")
			g.Expect(err).NotTo(HaveOccurred())
			golden.Check(t, name+".golden.yaml", out)
		})
	}
}

// TestConfigFileUpstreamLayout checks the file byte for byte against the layout upstream generates
// (its e2e test asserts this exact text).
func TestConfigFileUpstreamLayout(t *testing.T) {
	g := NewWithT(t)
	br := v1alpha1.OpAMPBridge{Spec: v1alpha1.OpAMPBridgeSpec{
		Endpoint: "ws://e2e-test-app-bridge-server:4320/v1/opamp",
		TLS:      &v1alpha1.OpAMPBridgeTLSConfig{Insecure: true},
		Capabilities: map[v1alpha1.OpAMPBridgeCapability]bool{
			"AcceptsRemoteConfig": true, "ReportsEffectiveConfig": true, "ReportsStatus": true, "ReportsHealth": false,
		},
		ComponentsAllowed: map[string][]string{"receivers": {"otlp"}, "exporters": {"debug"}},
	}}
	got, err := ConfigFile(br)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(`capabilities:
  AcceptsRemoteConfig: true
  ReportsEffectiveConfig: true
  ReportsHealth: false
  ReportsStatus: true
componentsAllowed:
  exporters:
  - debug
  receivers:
  - otlp
endpoint: ws://e2e-test-app-bridge-server:4320/v1/opamp
tls:
  insecure: true
`))
}

func TestBuild(t *testing.T) {
	base := func() v1alpha1.OpAMPBridge { return load(t, "minimal.yaml") }
	kinds := func(objs []client.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
		}
		return out
	}
	deployment := func(g Gomega, objs []client.Object) *appsv1.Deployment {
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				return d
			}
		}
		g.Expect(false).To(BeTrue(), "no Deployment")
		return nil
	}
	tests := []struct {
		name   string
		mutate func(*v1alpha1.OpAMPBridge, *Options)
		check  func(Gomega, []client.Object)
	}{{
		name: "objects, names and managed-by label",
		check: func(g Gomega, objs []client.Object) {
			g.Expect(kinds(objs)).To(Equal([]string{"ConfigMap/test-opamp-bridge", "ServiceAccount/test-opamp-bridge", "Service/test-opamp-bridge", "Deployment/test-opamp-bridge"}))
			for _, o := range objs {
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "opentelemetry-operator"), o.GetName())
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/component", "opentelemetry-opamp-bridge"))
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/instance", "observability.test"))
				g.Expect(o.GetOwnerReferences()).To(BeEmpty())
			}
		},
	}, {
		name:   "no ServiceAccount when spec.serviceAccount is set",
		mutate: func(b *v1alpha1.OpAMPBridge, _ *Options) { b.Spec.ServiceAccount = "mine" },
		check: func(g Gomega, objs []client.Object) {
			g.Expect(kinds(objs)).NotTo(ContainElement("ServiceAccount/test-opamp-bridge"))
			g.Expect(deployment(g, objs).Spec.Template.Spec.ServiceAccountName).To(Equal("mine"))
		},
	}, {
		name: "name and heartbeat passed, no leader election with one replica",
		check: func(g Gomega, objs []client.Object) {
			c := deployment(g, objs).Spec.Template.Spec.Containers[0]
			g.Expect(c.Name).To(Equal("opamp-bridge-container"))
			g.Expect(c.Image).To(Equal(DefaultImage))
			g.Expect(c.Args).To(Equal([]string{"--name=test", "--heartbeat-interval=30s"}))
		},
	}, {
		name: "leader election with several replicas, operator heartbeat",
		mutate: func(b *v1alpha1.OpAMPBridge, o *Options) {
			b.Spec.Replicas = ptr.To[int32](3)
			o.HeartbeatInterval = 10 * time.Second
		},
		check: func(g Gomega, objs []client.Object) {
			d := deployment(g, objs)
			g.Expect(*d.Spec.Replicas).To(Equal(int32(3)))
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"--name=test", "--heartbeat-interval=10s", "--leader-elect"}))
		},
	}, {
		name:   "heartbeat disabled",
		mutate: func(_ *v1alpha1.OpAMPBridge, o *Options) { o.HeartbeatInterval = 0 },
		check: func(g Gomega, objs []client.Object) {
			g.Expect(deployment(g, objs).Spec.Template.Spec.Containers[0].Args).To(ContainElement("--heartbeat-interval=0s"))
		},
	}, {
		name: "user's OTELCOL_NAMESPACE and GOMEMLIMIT win, golang flags gate off",
		mutate: func(b *v1alpha1.OpAMPBridge, o *Options) {
			b.Spec.Env = []corev1.EnvVar{{Name: "OTELCOL_NAMESPACE", Value: "elsewhere"}}
			o.SetGolangFlags = false
		},
		check: func(g Gomega, objs []client.Object) {
			env := deployment(g, objs).Spec.Template.Spec.Containers[0].Env
			g.Expect(env).To(Equal([]corev1.EnvVar{{Name: "OTELCOL_NAMESPACE", Value: "elsewhere"}}))
		},
	}, {
		name: "service: spec.ports first, then 80 -> 8080",
		mutate: func(b *v1alpha1.OpAMPBridge, _ *Options) {
			b.Spec.Ports = []corev1.ServicePort{{Name: "extra", Port: 9000}}
		},
		check: func(g Gomega, objs []client.Object) {
			svc := objs[2].(*corev1.Service)
			g.Expect(svc.Spec.Ports).To(HaveLen(2))
			g.Expect(svc.Spec.Ports[0].Name).To(Equal("extra"))
			g.Expect(svc.Spec.Ports[1].Name).To(Equal("opamp-bridge"))
			g.Expect(svc.Spec.Ports[1].Port).To(Equal(int32(80)))
			g.Expect(svc.Spec.Ports[1].TargetPort.IntValue()).To(Equal(8080))
			g.Expect(svc.Spec.Selector).To(Equal(deployment(g, objs).Spec.Selector.MatchLabels))
		},
	}, {
		name: "long names are truncated to a DNS label",
		mutate: func(b *v1alpha1.OpAMPBridge, _ *Options) {
			b.Name = strings.Repeat("a", 60)
		},
		check: func(g Gomega, objs []client.Object) {
			for _, o := range objs {
				g.Expect(len(o.GetName())).To(BeNumerically("<=", 63))
				g.Expect(o.GetName()).To(HaveSuffix("-opamp-bridge"))
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			br, opts := base(), DefaultOptions()
			if tt.mutate != nil {
				tt.mutate(&br, &opts)
			}
			objs, err := Build(br, opts)
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, objs)
		})
	}
}

// TestConfigChangeRollsPod: the pod template's hash follows the file, and nothing else moves it.
func TestConfigChangeRollsPod(t *testing.T) {
	g := NewWithT(t)
	hashOf := func(b v1alpha1.OpAMPBridge) string {
		objs, err := Build(b, DefaultOptions())
		g.Expect(err).NotTo(HaveOccurred())
		d := objs[len(objs)-1].(*appsv1.Deployment)
		h := d.Spec.Template.Annotations[ConfigHashAnnotation]
		want, err := HashOf(b)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(h).To(Equal(want))
		return h
	}
	br := load(t, "minimal.yaml")
	h0 := hashOf(br)
	br.Spec.NodeSelector = map[string]string{"a": "b"}
	g.Expect(hashOf(br)).To(Equal(h0))
	br.Spec.Endpoint = "ws://other:4320/v1/opamp"
	g.Expect(hashOf(br)).NotTo(Equal(h0))
}

// TestBuildDoesNotMutateInput guards against appending to the resource's own slices and maps.
func TestBuildDoesNotMutateInput(t *testing.T) {
	g := NewWithT(t)
	br := load(t, "full.yaml")
	br.Spec.Ports = append(make([]corev1.ServicePort, 0, 8), br.Spec.Ports...)
	before := br.DeepCopy()
	_, err := Build(br, DefaultOptions())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(br).To(Equal(*before))
	g.Expect(br.Spec.Ports[:cap(br.Spec.Ports)][1]).To(Equal(corev1.ServicePort{}), "spec.ports backing array was written")
}

// TestDaemonReadsConfigFile feeds the generated file to the bridge daemon's own parser (unknown
// keys are errors there), so the operator and the daemon cannot drift apart.
func TestDaemonReadsConfigFile(t *testing.T) {
	for _, name := range []string{"minimal.yaml", "full.yaml"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			br := load(t, name)
			data, err := ConfigFile(br)
			g.Expect(err).NotTo(HaveOccurred())
			cfg := &bridgeconfig.Config{Name: br.Name, Mode: bridgeconfig.ModeOperator}
			g.Expect(bridgeconfig.Parse(data, func(string) string { return "token" }, cfg)).To(Succeed())
			g.Expect(cfg.Validate()).To(Succeed())
			g.Expect(cfg.Endpoint).To(Equal(br.Spec.Endpoint))
			g.Expect(cfg.Capabilities).To(HaveLen(len(br.Spec.Capabilities)))
			if br.Spec.TLS != nil {
				g.Expect(cfg.TLS.InsecureSkipVerify).To(Equal(br.Spec.TLS.InsecureSkipVerify))
			}
			if br.Spec.Description != nil {
				g.Expect(cfg.Description.NonIdentifyingAttributes).To(Equal(br.Spec.Description.NonIdentifyingAttributes))
			}
		})
	}
}

// TestProxyServerReachesTheBridge: spec.proxyServer's Secrets are mounted where the generated
// configuration file says, and the bridge's own loader reads that file into a TLS, token and
// size-limited proxy, scoped to spec.namespaces (issue 14, items 11 and 12).
func TestProxyServerReachesTheBridge(t *testing.T) {
	g := NewWithT(t)
	b := load(t, "secured.yaml")
	objs, err := Build(b, DefaultOptions())
	g.Expect(err).NotTo(HaveOccurred())
	var d *appsv1.Deployment
	for _, o := range objs {
		if dep, ok := o.(*appsv1.Deployment); ok {
			d = dep
		}
	}
	g.Expect(d).NotTo(BeNil())
	c := d.Spec.Template.Spec.Containers[0]
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	g.Expect(mounts).To(HaveKeyWithValue(ProxyTLSVolume, ProxyTLSMountPath))
	g.Expect(mounts).To(HaveKeyWithValue(ProxyTokenVolume, ProxyTokenMountPath))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"), "several replicas: only the leader is ready")
	g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
	g.Expect(c.Args).To(ContainElement("--name=secured.eu"))

	file, err := ConfigFile(b)
	g.Expect(err).NotTo(HaveOccurred())
	var cfg bridgeconfig.Config
	g.Expect(bridgeconfig.Parse(file, func(string) string { return "" }, &cfg)).To(Succeed())
	g.Expect(cfg.ProxyServer).To(Equal(bridgeconfig.ProxyServer{
		CertFile: ProxyTLSMountPath + "/tls.crt", KeyFile: ProxyTLSMountPath + "/tls.key",
		BearerTokenFile: ProxyTokenMountPath + "/token", MaxMessageBytes: 4 << 20,
	}))
	g.Expect(cfg.Namespaces).To(Equal([]string{"apps", "edge"}))
	vols := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	g.Expect(vols[ProxyTLSVolume].Secret.SecretName).To(Equal("bridge-proxy-tls"))
	g.Expect(vols[ProxyTokenVolume].Secret.Items).To(Equal([]corev1.KeyToPath{{Key: "token", Path: "token"}}))
}
