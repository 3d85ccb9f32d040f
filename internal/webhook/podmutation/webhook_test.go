package podmutation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

const collectorSpec = `
config:
  receivers:
    otlp:
      protocols:
        grpc: {}
  exporters:
    debug: {}
  service:
    pipelines:
      traces:
        receivers: [otlp]
        exporters: [debug]
`

func newNamespace(t testing.TB, name string, annotations map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	// The webhook reads namespaces from its metadata informer: wait until it has this one.
	NewWithT(t).Eventually(func() error {
		return mgr.GetCache().Get(context.Background(), client.ObjectKey{Name: name}, podmutation.NamespaceMetadata())
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())
	return name
}

// newCollector creates a collector through the API server (so the collector webhooks default it)
// and waits until the manager's cache has it, as the pod webhook reads collectors from there.
func newCollector(t testing.TB, ns, name string, mode v1beta1.Mode, edit ...func(*v1beta1.OpenTelemetryCollector)) {
	t.Helper()
	otelcol := &v1beta1.OpenTelemetryCollector{}
	if err := yaml.UnmarshalStrict([]byte(collectorSpec), &otelcol.Spec); err != nil {
		t.Fatal(err)
	}
	otelcol.Namespace, otelcol.Name, otelcol.Spec.Mode = ns, name, mode
	for _, e := range edit {
		e(otelcol)
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, otelcol); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() error {
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(otelcol), &v1beta1.OpenTelemetryCollector{})
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())
}

func newPod(ns, name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "app", Image: "nginx"}},
		},
	}
}

// create sends pod to the API server and returns it as stored, with the warnings the client got.
func create(t *testing.T, pod *corev1.Pod) (*corev1.Pod, []string) {
	t.Helper()
	c, w := clientWithWarnings(t)
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	return got, w.all()
}

func names(cs []corev1.Container) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func volumeNames(vs []corev1.Volume) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// expectInjected checks that pod carries collector ns/name as a native sidecar after the pod's
// own init containers.
func expectInjected(g Gomega, pod *corev1.Pod, ns, name string) corev1.Container {
	g.Expect(pod.Labels).To(HaveKeyWithValue(sidecar.InjectedLabel, ns+"."+name))
	g.Expect(pod.Annotations).To(HaveKeyWithValue(sidecar.GenerationAnnotation, MatchRegexp(`^`+ns+"/"+name+`@[1-9][0-9]*$`)),
		"the collector generation the sidecar was built from, for the catch-up controller")
	g.Expect(pod.Spec.Containers).To(HaveLen(1), "the app's containers are left alone")
	g.Expect(pod.Spec.InitContainers[0].Name).To(Equal("setup"))
	last := pod.Spec.InitContainers[len(pod.Spec.InitContainers)-1]
	g.Expect(last.Name).To(Equal(naming.Container))
	g.Expect(last.RestartPolicy).To(Equal(ptr.To(corev1.ContainerRestartPolicyAlways)))
	if pod.Namespace != ns {
		// A pod of another namespace cannot mount the collector's ConfigMap: the config is inline.
		g.Expect(last.Args).To(ContainElement("--config=env:" + sidecar.ConfigEnv))
		g.Expect(envValue(last, sidecar.ConfigEnv)).To(ContainSubstring("otlp"))
		return last
	}
	// A pod of the collector's namespace reads the config from the collector's ConfigMap.
	g.Expect(last.Args).To(ContainElement("--config=/conf/collector.yaml"))
	g.Expect(last.Env).NotTo(ContainElement(HaveField("Name", sidecar.ConfigEnv)))
	g.Expect(last.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: naming.ConfigMapVolume, MountPath: "/conf"}))
	otelcol := &v1beta1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, otelcol)).To(Succeed())
	hash, err := mcollector.ConfigHash(otelcol.Spec.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pod.Spec.Volumes).To(ContainElement(And(
		HaveField("Name", naming.ConfigMapVolume),
		HaveField("ConfigMap.Name", naming.ConfigMap(name, hash)))))
	return last
}

// expectUnchanged checks that pod is stored as newPod built it.
func expectUnchanged(g Gomega, pod *corev1.Pod) {
	g.Expect(pod.Labels).NotTo(HaveKey(sidecar.InjectedLabel))
	g.Expect(names(pod.Spec.InitContainers)).To(Equal([]string{"setup"}))
	g.Expect(names(pod.Spec.Containers)).To(Equal([]string{"app"}))
}

// TestInjectTrue: "true" picks the namespace's one sidecar collector (a deployment-mode one does
// not count) and adds its init containers, volumes and configmaps, with the resource attributes
// of the pod's ReplicaSet and Deployment.
func TestInjectTrue(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "inject-true", nil)
	newCollector(t, ns, "gateway", v1beta1.ModeDeployment)
	newCollector(t, ns, "agent", v1beta1.ModeSidecar, func(c *v1beta1.OpenTelemetryCollector) {
		c.Spec.InitContainers = []corev1.Container{{Name: "collector-init", Image: "busybox"}}
		c.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		c.Spec.ConfigMaps = []v1beta1.ConfigMapsSpec{{Name: "extra", MountPath: "extra"}}
	})
	rs := replicaSetOfDeployment(t, ns, "app")
	pod := newPod(ns, "p", map[string]string{podmutation.Annotation: "true"})
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}

	got, warnings := create(t, pod)
	g.Expect(warnings).To(BeEmpty())
	otc := expectInjected(g, got, ns, "agent")
	g.Expect(names(got.Spec.InitContainers)).To(Equal([]string{"setup", "collector-init", naming.Container}))
	g.Expect(volumeNames(got.Spec.Volumes)).To(ContainElements("scratch", naming.ConfigMapExtra("extra")))
	attrs := envValue(otc, sidecar.ResourceAttributesEnv)
	g.Expect(attrs).To(ContainSubstring("k8s.namespace.name=" + ns))
	g.Expect(attrs).To(ContainSubstring("k8s.replicaset.name=" + rs.Name))
	g.Expect(attrs).To(ContainSubstring("k8s.deployment.name=app"), "the Deployment comes from the ReplicaSet, read uncached")

	// The same pod again, now carrying its sidecar (as a pod re-created from an injected spec):
	// left as it is.
	again := got.DeepCopy()
	again.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "p2", Annotations: got.Annotations, Labels: got.Labels}
	for i := range again.Spec.Volumes { // drop the projected token volume the API server added
		if strings.HasPrefix(again.Spec.Volumes[i].Name, "kube-api-access") {
			again.Spec.Volumes = append(again.Spec.Volumes[:i], again.Spec.Volumes[i+1:]...)
			break
		}
	}
	got2, warnings := create(t, again)
	g.Expect(warnings).To(BeEmpty())
	g.Expect(names(got2.Spec.InitContainers)).To(Equal(names(got.Spec.InitContainers)))
	g.Expect(volumeNames(got2.Spec.Volumes)).To(Equal(volumeNames(again.Spec.Volumes)))
}

func replicaSetOfDeployment(t testing.TB, ns, name string) *appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	if err := env.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-5d9c", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true),
		}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	if err := env.Client.Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestInjectByName: "<name>" picks that collector of the pod's namespace even when there are
// several, and "<ns>/<name>" one of another namespace.
func TestInjectByName(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "by-name", nil)
	newCollector(t, ns, "a", v1beta1.ModeSidecar, func(c *v1beta1.OpenTelemetryCollector) {
		c.Annotations = map[string]string{podmutation.AllowedNamespacesAnnotation: "elsewhere, by-name-other"}
	})
	newCollector(t, ns, "b", v1beta1.ModeSidecar)
	got, warnings := create(t, newPod(ns, "p", map[string]string{podmutation.Annotation: "b"}))
	g.Expect(warnings).To(BeEmpty())
	expectInjected(g, got, ns, "b")

	// Another namespace's pods get "a" only because it lists them in its allowed-namespaces
	// annotation; "b" does not and is not copied into them.
	other := newNamespace(t, "by-name-other", nil)
	got, warnings = create(t, newPod(other, "p", map[string]string{podmutation.Annotation: ns + "/b"}))
	g.Expect(warnings).To(ContainElement(ContainSubstring(podmutation.AllowedNamespacesAnnotation)))
	expectUnchanged(g, got)
	got, warnings = create(t, newPod(other, "p2", map[string]string{podmutation.Annotation: ns + "/a"}))
	g.Expect(warnings).To(BeEmpty())
	expectInjected(g, got, ns, "a")
	g.Expect(envValue(got.Spec.InitContainers[len(got.Spec.InitContainers)-1], sidecar.ResourceAttributesEnv)).
		To(ContainSubstring("k8s.namespace.name="+other), "the attributes are the pod's")
}

// TestNamespaceAnnotation: the namespace's annotation applies to pods without one; a pod's
// "false" or collector name wins; a pod's "true" takes the collector the namespace names.
func TestNamespaceAnnotation(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "ns-true", map[string]string{podmutation.Annotation: "true"})
	newCollector(t, ns, "agent", v1beta1.ModeSidecar)
	got, _ := create(t, newPod(ns, "plain", nil))
	expectInjected(g, got, ns, "agent")
	got, warnings := create(t, newPod(ns, "opt-out", map[string]string{podmutation.Annotation: "false"}))
	g.Expect(warnings).To(BeEmpty())
	expectUnchanged(g, got)

	named := newNamespace(t, "ns-named", map[string]string{podmutation.Annotation: "b"})
	newCollector(t, named, "a", v1beta1.ModeSidecar)
	newCollector(t, named, "b", v1beta1.ModeSidecar)
	got, _ = create(t, newPod(named, "true", map[string]string{podmutation.Annotation: "true"}))
	expectInjected(g, got, named, "b")
	got, _ = create(t, newPod(named, "own-choice", map[string]string{podmutation.Annotation: "a"}))
	expectInjected(g, got, named, "a")
}

// TestNotInjected: pods whose annotation cannot be honoured, or that did not ask, are created
// unchanged; when they asked, a warning says why.
func TestNotInjected(t *testing.T) {
	none := newNamespace(t, "no-collector", nil)
	newCollector(t, none, "gateway", v1beta1.ModeDeployment)
	two := newNamespace(t, "two-sidecars", nil)
	newCollector(t, two, "a", v1beta1.ModeSidecar)
	newCollector(t, two, "b", v1beta1.ModeSidecar)
	tests := []struct {
		name, ns, value string
		warning         string // "" means no warning
	}{
		{name: "no annotation", ns: two},
		{name: "false", ns: two, value: "false"},
		{name: "FALSE", ns: two, value: "FALSE"},
		{name: "no sidecar collector", ns: none, value: "true", warning: `namespace "no-collector" has no OpenTelemetryCollector in sidecar mode`},
		{name: "two sidecar collectors", ns: two, value: "true", warning: "has 2 OpenTelemetryCollectors in sidecar mode (a, b)"},
		{name: "unknown collector", ns: two, value: "c", warning: "OpenTelemetryCollector two-sidecars/c not found"},
		{name: "not a sidecar", ns: none, value: "gateway", warning: "is in deployment mode, not sidecar"},
		{name: "malformed", ns: two, value: "a/b/c", warning: "is neither true, false, <name> nor <namespace>/<name>"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var ann map[string]string
			if tt.value != "" {
				ann = map[string]string{podmutation.Annotation: tt.value}
			}
			got, warnings := create(t, newPod(tt.ns, "p"+string(rune('a'+i)), ann))
			expectUnchanged(g, got)
			if tt.warning == "" {
				g.Expect(warnings).To(BeEmpty())
			} else {
				g.Expect(warnings).To(ConsistOf(And(HavePrefix("sidecar not injected: "), ContainSubstring(tt.warning))))
			}
		})
	}
}

// TestAlreadyInjected: a pod that already has an otc-container (init or regular) keeps it, with
// no second one and no error.
func TestAlreadyInjected(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "already", nil)
	newCollector(t, ns, "agent", v1beta1.ModeSidecar)
	pod := newPod(ns, "p", map[string]string{podmutation.Annotation: "true"})
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: naming.Container, Image: "my-collector"})
	got, warnings := create(t, pod)
	g.Expect(warnings).To(BeEmpty())
	g.Expect(names(got.Spec.Containers)).To(Equal([]string{"app", naming.Container}))
	g.Expect(got.Spec.Containers[1].Image).To(Equal("my-collector"))
	g.Expect(names(got.Spec.InitContainers)).To(Equal([]string{"setup"}))
	g.Expect(got.Labels).NotTo(HaveKey(sidecar.InjectedLabel))
}

// TestFalseRemovesSidecar: "false" removes an otc-container (upstream's behaviour), native or
// not, and the injected label with it.
func TestFalseRemovesSidecar(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "remove", nil)
	pod := newPod(ns, "p", map[string]string{podmutation.Annotation: "false"})
	pod.Labels = map[string]string{sidecar.InjectedLabel: ns + ".agent", "app": "x"}
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{
		Name: naming.Container, Image: "collector", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
	})
	got, warnings := create(t, pod)
	g.Expect(warnings).To(BeEmpty())
	expectUnchanged(g, got)
	g.Expect(got.Labels).To(HaveKeyWithValue("app", "x"))
}
