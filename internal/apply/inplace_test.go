package apply_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/apply"
)

// richObjects are desired objects with the shapes the builders produce: keyed lists (containers,
// ports without an explicit protocol, env), sets, nested maps, quantities, int-or-string.
func richObjects(ns string, labels map[string]string) []client.Object {
	sel := map[string]string{"app": "rich"}
	podLabels := map[string]string{"app": "rich"}
	for k, v := range labels {
		podLabels[k] = v
	}
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "rich", Namespace: ns, Labels: podLabels, Annotations: map[string]string{"a": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "otc", Image: "example.invalid/c:1", Args: []string{"--config=/conf/c.yaml"},
						Ports:          []corev1.ContainerPort{{Name: "otlp", ContainerPort: 4317}, {Name: "metrics", ContainerPort: 8888, Protocol: corev1.ProtocolTCP}},
						Env:            []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
						VolumeMounts:   []corev1.VolumeMount{{Name: "conf", MountPath: "/conf"}},
						Resources:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: mustQ("128Mi")}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(13133)}}},
					}},
					Volumes: []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "c.yaml", Path: "c.yaml"}}}}}},
					Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
				},
			},
		},
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "rich", Namespace: ns, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: sel,
			Ports: []corev1.ServicePort{{Name: "otlp-grpc", Port: 4317, TargetPort: intstr.FromInt32(4317)},
				{Name: "otlp-http", Port: 4318, Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("http"), TargetPort: intstr.FromString("otlp-http")}},
		},
	}
	cm := configMap(ns, "1")
	cm.Labels = labels
	return []client.Object{cm, svc, dep}
}

// metadataOnly is how the operator's cache holds owned objects other than workloads.
func metadataOnly(obj client.Object) client.Object {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	m.ObjectMeta = *obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	return m
}

// liveObjects reads the live counterparts of desired, as the operator's cache holds them: full
// workloads with managedFields reduced by the cache transform, metadata only for the rest.
func liveObjects(t *testing.T, desired []client.Object) apply.Objects {
	out := apply.Objects{}
	strip := apply.KeepOwnManagedFields("otelop-test")
	for _, d := range desired {
		l := live(t, d)
		if l == nil {
			continue
		}
		l.GetObjectKind().SetGroupVersionKind(d.GetObjectKind().GroupVersionKind())
		if _, workload := l.(*appsv1.Deployment); !workload {
			l = metadataOnly(l)
		}
		// After metadataOnly, as the cache does: of a metadata-only object it keeps no entry.
		if _, err := strip(l); err != nil {
			t.Fatal(err)
		}
		out[apply.KeyOf(d)] = l
	}
	return out
}

// A new applier (an operator restart: nothing remembered) sends no write for objects whose
// desired state is in place, whether the cache holds them in full or as metadata only.
func TestRestartedApplierWritesNothingWhenInPlace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-restart")
	labels := map[string]string{"team": "a"}
	_, err := apply.New(env.Client, "otelop-test").ApplyAll(ctx, richObjects(ns, labels), nil)
	g.Expect(err).NotTo(HaveOccurred())

	c, writes := countingClient(t)
	restarted := apply.New(c, "otelop-test")
	changes, err := restarted.ApplyAll(ctx, richObjects(ns, labels), liveObjects(t, richObjects(ns, labels)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes.Changed()).To(BeEmpty())
	g.Expect(writes.Load()).To(BeZero(), "a restart with nothing changed must not write")

	// A cache without managedFields at all: the applier reads the object instead of guessing.
	l := live(t, richObjects(ns, labels)[2])
	l.SetManagedFields(nil)
	again := apply.New(c, "otelop-test")
	ch, err := again.Apply(ctx, richObjects(ns, labels)[2], l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Unchanged))
	g.Expect(writes.Load()).To(BeZero())
}

// Drift made while no applier ran (a changed value, a removed field) is repaired by a new one.
func TestRestartedApplierRepairsDrift(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-restart-drift")
	_, err := apply.New(env.Client, "otelop-test").ApplyAll(ctx, richObjects(ns, nil), nil)
	g.Expect(err).NotTo(HaveOccurred())

	dep := live(t, richObjects(ns, nil)[2]).(*appsv1.Deployment)
	dep.Spec.Template.Spec.Containers[0].Image = "example.invalid/c:edited"
	dep.Spec.Template.Spec.Containers[0].Args = nil
	g.Expect(env.Client.Update(ctx, dep)).To(Succeed())
	cm := live(t, richObjects(ns, nil)[0]).(*corev1.ConfigMap)
	delete(cm.Data, "k")
	g.Expect(env.Client.Update(ctx, cm)).To(Succeed())

	changes, err := apply.New(env.Client, "otelop-test").ApplyAll(ctx, richObjects(ns, nil), liveObjects(t, richObjects(ns, nil)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes.Changed()).To(HaveLen(2))
	dep = live(t, richObjects(ns, nil)[2]).(*appsv1.Deployment)
	g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("example.invalid/c:1"))
	g.Expect(dep.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"--config=/conf/c.yaml"}))
	g.Expect(live(t, richObjects(ns, nil)[0]).(*corev1.ConfigMap).Data).To(HaveKeyWithValue("k", "1"))
}

// A field we applied and no longer desire (a label removed from the owner while the operator was
// down) is removed by a new applier, though every desired field is in place.
func TestRestartedApplierRemovesFieldsNoLongerDesired(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-restart-removed")
	_, err := apply.New(env.Client, "otelop-test").ApplyAll(ctx, richObjects(ns, map[string]string{"team": "a", "tier": "gold"}), nil)
	g.Expect(err).NotTo(HaveOccurred())

	desired := richObjects(ns, map[string]string{"team": "a"})
	changes, err := apply.New(env.Client, "otelop-test").ApplyAll(ctx, desired, liveObjects(t, desired))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes.Changed()).To(HaveLen(3))
	for _, d := range desired {
		g.Expect(live(t, d).GetLabels()).NotTo(HaveKey("tier"), d.GetObjectKind().GroupVersionKind().Kind)
	}
	dep := live(t, desired[2]).(*appsv1.Deployment)
	g.Expect(dep.Spec.Template.Labels).NotTo(HaveKey("tier"))
}

// Objects another tool made with Update requests (upstream's operator) and that already hold the
// desired state are taken over without a write; ones that differ are applied.
func TestTakeoverOfObjectsMadeByAnotherManager(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-takeover")
	objs := richObjects(ns, map[string]string{"team": "a"})
	for _, o := range objs {
		cp := o.DeepCopyObject().(client.Object)
		cp.SetLabels(map[string]string{"team": "a", "legacy": "upstream"}) // extra fields stay
		if d, ok := cp.(*appsv1.Deployment); ok {
			d.Labels["app"] = "rich"
		}
		g.Expect(env.Client.Create(ctx, cp, client.FieldOwner("manager"))).To(Succeed())
	}
	c, writes := countingClient(t)
	changes, err := apply.New(c, "otelop-test").ApplyAll(ctx, objs, liveObjects(t, objs))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes.Changed()).To(BeEmpty())
	g.Expect(writes.Load()).To(BeZero(), "objects that already hold the desired state are taken over as they are")

	cm := live(t, objs[0]).(*corev1.ConfigMap)
	cm.Data["k"] = "upstream's"
	g.Expect(env.Client.Update(ctx, cm, client.FieldOwner("manager"))).To(Succeed())
	changes, err = apply.New(c, "otelop-test").ApplyAll(ctx, objs, liveObjects(t, objs))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes.Changed()).To(HaveLen(1))
	g.Expect(writes.Load()).To(Equal(int64(1)))
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// BenchmarkApplyDecidesFromLive measures what a reconcile costs for an object the applier has not
// applied in this process (after a restart, or after a status change moved its resourceVersion):
// the in-place decision on a cached workload (content and managedFields compared), no request.
func BenchmarkApplyDecidesFromLive(b *testing.B) {
	ctx := context.Background()
	ns := "apply-bench"
	t := &testing.T{}
	namespace(t, ns)
	objs := richObjects(ns, map[string]string{"team": "a"})
	if _, err := apply.New(env.Client, "otelop-test").ApplyAll(ctx, objs, nil); err != nil {
		b.Fatal(err)
	}
	dep := objs[2]
	l := live(t, dep)
	l.GetObjectKind().SetGroupVersionKind(dep.GetObjectKind().GroupVersionKind())
	if _, err := apply.KeepOwnManagedFields("otelop-test")(l); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ch, err := apply.New(env.Client, "otelop-test").Apply(ctx, dep, l)
		if err != nil || ch.Action != apply.Unchanged {
			b.Fatal(ch, err)
		}
	}
}

// A cached object (managedFields reduced by KeepOwnManagedFields) sent back with an update does
// not replace the stored managedFields: other managers keep their entries.
func TestReducedManagedFieldsDoNotReplaceStoredOnes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-reduced")
	_, err := apply.New(env.Client, "otelop-test").Apply(ctx, configMap(ns, "1"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	cm := live(t, configMap(ns, "1")).(*corev1.ConfigMap)
	cm.Labels["team"] = "a"
	g.Expect(env.Client.Update(ctx, cm, client.FieldOwner("someone"))).To(Succeed())

	cached := live(t, configMap(ns, "1")).(*corev1.ConfigMap)
	_, err = apply.KeepOwnManagedFields("otelop-test")(cached)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cached.ManagedFields).To(HaveLen(2))
	cached.Labels["tier"] = "b"
	g.Expect(env.Client.Update(ctx, cached, client.FieldOwner("later"))).To(Succeed())
	got := live(t, configMap(ns, "1"))
	managers := []string{}
	for _, e := range got.GetManagedFields() {
		managers = append(managers, e.Manager)
	}
	g.Expect(managers).To(ContainElements("otelop-test", "someone", "later"))
	g.Expect(managers).NotTo(ContainElement(apply.ReducedManagedFields))
}
