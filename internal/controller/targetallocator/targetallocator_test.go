package targetallocator_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
	"github.com/otelop/otelop/internal/operator/managertest"
)

func newNamespace(t *testing.T) string { return managertest.NewNamespace(t, k8s, "ta") }

func newTA(ns, name string) *v1alpha1.TargetAllocator {
	return &v1alpha1.TargetAllocator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.TargetAllocatorSpec{
			ScrapeConfigs: []v1beta1.AnyConfig{{Object: map[string]any{
				"job_name":       "static",
				"static_configs": []any{map[string]any{"targets": []any{"10.0.0.1:9100"}}},
			}}},
		},
	}
}

func newCollector(ns, name string, job string) *v1beta1.OpenTelemetryCollector {
	return &v1beta1.OpenTelemetryCollector{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.OpenTelemetryCollectorSpec{
			Mode:            v1beta1.ModeStatefulSet,
			UpgradeStrategy: v1beta1.UpgradeStrategyAutomatic,
			TargetAllocator: v1beta1.TargetAllocatorEmbedded{Enabled: true},
			Config: v1beta1.Config{
				Receivers: v1beta1.AnyConfig{Object: map[string]any{"prometheus": map[string]any{"config": map[string]any{
					"scrape_configs": []any{map[string]any{"job_name": job, "kubernetes_sd_configs": []any{map[string]any{"role": "pod"}}}},
				}}}},
				Exporters: v1beta1.AnyConfig{Object: map[string]any{"debug": map[string]any{}}},
				Service: v1beta1.Service{Pipelines: map[string]*v1beta1.Pipeline{
					"metrics": {Receivers: []string{"prometheus"}, Exporters: []string{"debug"}},
				}},
			},
		},
	}
}

func get[T client.Object](g Gomega, ns, name string, obj T) T {
	return managertest.Get(g, k8s, ns, name, obj)
}

func isController(g Gomega, obj client.Object, owner *v1alpha1.TargetAllocator) {
	managertest.ExpectController(g, obj, owner, "TargetAllocator")
}

func file(g Gomega, ns, name string) string {
	return get(g, ns, mta.Name(name), &corev1.ConfigMap{}).Data[mta.ConfigMapKey]
}

// TestStandalone creates a target allocator without a collector, checks every object and the
// status, switches to a user ServiceAccount (ours is pruned, the user's objects are left alone)
// and repairs drift.
func TestStandalone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ta := newTA(ns, "alone")
	g.Expect(k8s.Create(ctx, ta)).To(Succeed())
	name := "alone-targetallocator"

	g.Eventually(func(g Gomega) {
		cm := get(g, ns, name, &corev1.ConfigMap{})
		sa := get(g, ns, name, &corev1.ServiceAccount{})
		svc := get(g, ns, name, &corev1.Service{})
		dep := get(g, ns, name, &appsv1.Deployment{})
		pdb := get(g, ns, name, &policyv1.PodDisruptionBudget{})
		for _, o := range []client.Object{cm, sa, svc, dep, pdb} {
			isController(g, o, ta)
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "opentelemetry-operator"))
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/component", "opentelemetry-targetallocator"))
		}
		g.Expect(cm.Data[mta.ConfigMapKey]).To(ContainSubstring("collector_selector: null\n"))
		g.Expect(cm.Data[mta.ConfigMapKey]).To(ContainSubstring("job_name: static"))
		c := dep.Spec.Template.Spec.Containers[0]
		g.Expect(c.Name).To(Equal("ta-container"))
		g.Expect(c.Image).To(Equal(mta.DefaultImage))
		g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(name))
		g.Expect(svc.Spec.Ports).To(ConsistOf(HaveField("Port", int32(80))))
		st := get(g, ns, "alone", &v1alpha1.TargetAllocator{}).Status
		g.Expect(st.Version).To(Equal(mta.DefaultVersion))
		g.Expect(st.Image).To(Equal(mta.DefaultImage))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// A user's objects in the namespace, even with our label, are never touched.
	userCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-config", Namespace: ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator"}}}
	g.Expect(k8s.Create(ctx, userCM)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: ns}})).To(Succeed())

	// Prune: with spec.serviceAccount our ServiceAccount goes; least-weighted drops the PDB.
	g.Eventually(func() error {
		cur := get(g, ns, "alone", &v1alpha1.TargetAllocator{})
		cur.Spec.ServiceAccount = "mine"
		cur.Spec.AllocationStrategy = v1beta1.TargetAllocatorAllocationStrategyLeastWeighted
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ServiceAccount{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "our ServiceAccount should be pruned, got %v", err)
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &policyv1.PodDisruptionBudget{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PDB should be pruned, got %v", err)
		g.Expect(get(g, ns, name, &appsv1.Deployment{}).Spec.Template.Spec.ServiceAccountName).To(Equal("mine"))
		g.Expect(file(g, ns, "alone")).To(ContainSubstring("allocation_strategy: least-weighted"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		get(g, ns, "user-config", &corev1.ConfigMap{})
		get(g, ns, "mine", &corev1.ServiceAccount{})
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// Drift: a deleted Service comes back, a hand-edited ConfigMap is restored.
	svc := get(g, ns, name, &corev1.Service{})
	g.Expect(k8s.Delete(ctx, svc)).To(Succeed())
	cm := get(g, ns, name, &corev1.ConfigMap{})
	cm.Data[mta.ConfigMapKey] = "allocation_strategy: hijacked\n"
	g.Expect(k8s.Update(ctx, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, ns, name, &corev1.Service{}).UID).NotTo(Equal(svc.UID))
		g.Expect(file(g, ns, "alone")).To(ContainSubstring("job_name: static"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestCollectorOwned: a target allocator owned by a collector selects the collector's pods and
// takes its scrape configs; a change of the collector's config rewrites the file and rolls the pod.
func TestCollectorOwned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(ns, "metrics", "pods")
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	ta := newTA(ns, "metrics")
	ta.OwnerReferences = []metav1.OwnerReference{{APIVersion: "opentelemetry.io/v1beta1", Kind: "OpenTelemetryCollector",
		Name: col.Name, UID: col.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	ta.Labels = map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator"}
	g.Expect(k8s.Create(ctx, ta)).To(Succeed())

	var firstHash string
	g.Eventually(func(g Gomega) {
		f := file(g, ns, "metrics")
		g.Expect(f).To(ContainSubstring("app.kubernetes.io/instance: " + ns + ".metrics"))
		g.Expect(f).To(ContainSubstring("app.kubernetes.io/component: opentelemetry-collector"))
		g.Expect(f).To(ContainSubstring("job_name: static"))
		g.Expect(f).To(ContainSubstring("job_name: pods"))
		firstHash = get(g, ns, "metrics-targetallocator", &appsv1.Deployment{}).Spec.Template.Annotations[mta.ConfigHashAnnotation]
		g.Expect(firstHash).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func() error {
		cur := get(g, ns, "metrics", &v1beta1.OpenTelemetryCollector{})
		cur.Spec.Config.Receivers.Object["prometheus"] = newCollector(ns, "x", "nodes").Spec.Config.Receivers.Object["prometheus"]
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		f := file(g, ns, "metrics")
		g.Expect(f).To(ContainSubstring("job_name: nodes"))
		g.Expect(f).NotTo(ContainSubstring("job_name: pods"))
		g.Expect(get(g, ns, "metrics-targetallocator", &appsv1.Deployment{}).Spec.Template.Annotations[mta.ConfigHashAnnotation]).NotTo(Equal(firstHash))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestCollectorLabel: a collector labelled opentelemetry.io/target-allocator=<ta> links itself to
// a standalone target allocator; removing the label makes it standalone again.
func TestCollectorLabel(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, newTA(ns, "shared"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(file(g, ns, "shared")).To(ContainSubstring("collector_selector: null"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	col := newCollector(ns, "labelled", "labelled-job")
	col.Spec.TargetAllocator.Enabled = false
	col.Labels = map[string]string{mta.CollectorLabel: "shared"}
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		f := file(g, ns, "shared")
		g.Expect(f).To(ContainSubstring("app.kubernetes.io/instance: " + ns + ".labelled"))
		g.Expect(f).To(ContainSubstring("job_name: labelled-job"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func() error {
		cur := get(g, ns, "labelled", &v1beta1.OpenTelemetryCollector{})
		cur.Labels = nil
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(file(g, ns, "shared")).To(ContainSubstring("collector_selector: null"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestUnmanaged: an unmanaged target allocator gets no objects, and a managed one that becomes
// unmanaged keeps its objects as they are.
func TestUnmanaged(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	hands := newTA(ns, "hands-off")
	hands.Spec.ManagementState = v1beta1.ManagementStateUnmanaged
	g.Expect(k8s.Create(ctx, hands)).To(Succeed())
	g.Expect(k8s.Create(ctx, newTA(ns, "later"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, ns, "later-targetallocator", &appsv1.Deployment{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func() error {
		cur := get(g, ns, "later", &v1alpha1.TargetAllocator{})
		cur.Spec.ManagementState = v1beta1.ManagementStateUnmanaged
		cur.Spec.Replicas = ptr.To[int32](3)
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hands-off-targetallocator"}, &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "unmanaged resource got a Deployment: %v", err)
		g.Expect(get(g, ns, "hands-off", &v1alpha1.TargetAllocator{}).Status.Version).To(BeEmpty())
		g.Expect(get(g, ns, "later-targetallocator", &appsv1.Deployment{}).Spec.Replicas).NotTo(Equal(ptr.To[int32](3)))
	}).WithTimeout(4 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// createConverged creates, for each name in ns, either a standalone target allocator (the
// first) or one owned by a collector of that name (the others), and waits until each has its
// version and its Deployment.
func createConverged(t *testing.T, ns string, names ...string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	for i, n := range names {
		ta := newTA(ns, n)
		if i > 0 {
			col := newCollector(ns, n, "pods")
			g.Expect(k8s.Create(ctx, col)).To(Succeed())
			ta.OwnerReferences = []metav1.OwnerReference{{APIVersion: "opentelemetry.io/v1beta1", Kind: "OpenTelemetryCollector",
				Name: col.Name, UID: col.UID, Controller: ptr.To(true)}}
		}
		g.Expect(k8s.Create(ctx, ta)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		for _, n := range names {
			g.Expect(get(g, ns, n, &v1alpha1.TargetAllocator{}).Status.Version).NotTo(BeEmpty())
			get(g, ns, n+"-targetallocator", &appsv1.Deployment{})
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestNoWritesWhenNothingChanged is the zero-write proof: once target allocators (standalone and
// collector-owned) have converged, resyncs (every 2s) reach the reconciler and the operator sends
// no write request, in any namespace.
func TestNoWritesWhenNothingChanged(t *testing.T) {
	ns := newNamespace(t)
	names := []string{"quiet-a", "quiet-b"}
	createConverged(t, ns, names...)
	managertest.ExpectQuiet(t, writes, managertest.Quiet{Controller: "targetallocator",
		MinReconciles: 4 * float64(len(names)), What: "during the idle window"}, managertest.Idle(5*syncPeriod+time.Second))
}

// TestRestartWritesNothing is the restart proof: converged target allocators (standalone and
// collector-owned), a new manager (empty caches, an applier that remembers nothing) reconciles
// them again (every one) and sends no write request.
func TestRestartWritesNothing(t *testing.T) {
	ns := newNamespace(t)
	names := []string{"restart-a", "restart-b"}
	createConverged(t, ns, names...)
	managertest.ExpectQuiet(t, writes, managertest.Quiet{Controller: "targetallocator", Namespace: ns,
		MinReconciles: 2 * float64(len(names)), What: "after the restart"}, managertest.RestartThenWait(restart, 2*syncPeriod+time.Second))
}

// TestForeignObjectIsNotTakenOver: a user's ConfigMap under the name a target allocator generates
// is neither taken over nor changed (the applier's create fails, the object is read and refused);
// the target allocator gets a Warning Event (reason OwnershipConflict) and its other objects are
// made. Once the user deletes the ConfigMap, the target allocator's own is created.
func TestForeignObjectIsNotTakenOver(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	name := "taken-targetallocator"
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "theirs"}}
	g.Expect(k8s.Create(ctx, theirs)).To(Succeed())
	ta := newTA(ns, "taken")
	g.Expect(k8s.Create(ctx, ta)).To(Succeed())

	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		found := false
		for _, e := range list.Items {
			found = found || (e.Regarding.Name == "taken" && e.Reason == "OwnershipConflict" && e.Type == corev1.EventTypeWarning)
		}
		g.Expect(found).To(BeTrue(), "a Warning Event on the target allocator")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	cur := get(g, ns, name, &corev1.ConfigMap{})
	g.Expect(cur.UID).To(Equal(theirs.UID))
	g.Expect(cur.Data).To(Equal(map[string]string{"k": "theirs"}))
	g.Expect(cur.OwnerReferences).To(BeEmpty(), "not adopted")
	g.Expect(cur.ManagedFields).NotTo(ContainElement(HaveField("Manager", HavePrefix("opentelemetry-operator"))), "no field of it was written")

	g.Expect(k8s.Delete(ctx, cur)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cm := get(g, ns, name, &corev1.ConfigMap{})
		isController(g, cm, get(g, ns, "taken", &v1alpha1.TargetAllocator{}))
		g.Expect(cm.Data).To(HaveKey(mta.ConfigMapKey))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(k8s.Delete(ctx, ta)).To(Succeed())
}
