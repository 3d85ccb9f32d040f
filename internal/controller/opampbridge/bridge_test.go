package opampbridge_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/operator/managertest"
)

func newNamespace(t *testing.T) string { return managertest.NewNamespace(t, k8s, "bridge") }

func newBridge(ns, name string) *v1alpha1.OpAMPBridge {
	return &v1alpha1.OpAMPBridge{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.OpAMPBridgeSpec{
			Endpoint: "ws://opamp-server:4320/v1/opamp",
			Capabilities: map[v1alpha1.OpAMPBridgeCapability]bool{
				v1alpha1.OpAMPBridgeCapabilityReportsStatus:          true,
				v1alpha1.OpAMPBridgeCapabilityAcceptsRemoteConfig:    true,
				v1alpha1.OpAMPBridgeCapabilityReportsEffectiveConfig: true,
			},
			UpgradeStrategy: v1alpha1.UpgradeStrategyAutomatic,
			Replicas:        ptr.To[int32](1),
		},
	}
}

func get[T client.Object](g Gomega, ns, name string, obj T) T {
	return managertest.Get(g, k8s, ns, name, obj)
}

func isController(g Gomega, obj client.Object, owner *v1alpha1.OpAMPBridge) {
	managertest.ExpectController(g, obj, owner, "OpAMPBridge")
}

// TestLifecycle creates a bridge, checks every object and status.version, changes the spec and
// checks the pod rolls, switches to a user ServiceAccount (ours is pruned, the user's objects are
// left alone) and repairs drift.
func TestLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	br := newBridge(ns, "fleet")
	g.Expect(k8s.Create(ctx, br)).To(Succeed())
	name := "fleet-opamp-bridge"

	// Create: every object exists, owned by the bridge and labelled for the operator's cache.
	var firstHash string
	g.Eventually(func(g Gomega) {
		cm := get(g, ns, name, &corev1.ConfigMap{})
		sa := get(g, ns, name, &corev1.ServiceAccount{})
		svc := get(g, ns, name, &corev1.Service{})
		dep := get(g, ns, name, &appsv1.Deployment{})
		for _, o := range []client.Object{cm, sa, svc, dep} {
			isController(g, o, br)
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "opentelemetry-operator"))
		}
		g.Expect(cm.Data[mbridge.ConfigMapKey]).To(ContainSubstring("endpoint: ws://opamp-server:4320/v1/opamp"))
		c := dep.Spec.Template.Spec.Containers[0]
		g.Expect(c.Name).To(Equal("opamp-bridge-container"))
		g.Expect(c.Args).To(ContainElement("--name=fleet"))
		g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(name))
		firstHash = dep.Spec.Template.Annotations[mbridge.ConfigHashAnnotation]
		g.Expect(firstHash).NotTo(BeEmpty())
		g.Expect(svc.Spec.Ports).To(ContainElement(HaveField("Port", int32(80))))
		g.Expect(get(g, ns, "fleet", &v1alpha1.OpAMPBridge{}).Status.Version).To(Equal(mbridge.DefaultVersion))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Update: a new endpoint changes the file and rolls the pod.
	g.Eventually(func() error {
		cur := get(g, ns, "fleet", &v1alpha1.OpAMPBridge{})
		cur.Spec.Endpoint = "wss://elsewhere:4320/v1/opamp"
		cur.Spec.Ports = []corev1.ServicePort{{Name: "extra", Port: 9000}}
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cm := get(g, ns, name, &corev1.ConfigMap{})
		g.Expect(cm.Data[mbridge.ConfigMapKey]).To(ContainSubstring("endpoint: wss://elsewhere:4320/v1/opamp"))
		dep := get(g, ns, name, &appsv1.Deployment{})
		g.Expect(dep.Spec.Template.Annotations[mbridge.ConfigHashAnnotation]).NotTo(Equal(firstHash))
		svc := get(g, ns, name, &corev1.Service{})
		g.Expect(svc.Spec.Ports).To(HaveLen(2))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// A user's objects in the namespace, even with our label, are never touched.
	userCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-config", Namespace: ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator"}}}
	g.Expect(k8s.Create(ctx, userCM)).To(Succeed())
	userSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: ns}}
	g.Expect(k8s.Create(ctx, userSA)).To(Succeed())

	// Prune: with spec.serviceAccount our ServiceAccount goes, the Deployment uses the user's.
	g.Eventually(func() error {
		cur := get(g, ns, "fleet", &v1alpha1.OpAMPBridge{})
		cur.Spec.ServiceAccount = "mine"
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ServiceAccount{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "our ServiceAccount should be pruned, got %v", err)
		g.Expect(get(g, ns, name, &appsv1.Deployment{}).Spec.Template.Spec.ServiceAccountName).To(Equal("mine"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		get(g, ns, "user-config", &corev1.ConfigMap{})
		get(g, ns, "mine", &corev1.ServiceAccount{})
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// Drift: a deleted Service comes back, a hand-edited ConfigMap is restored.
	svc := get(g, ns, name, &corev1.Service{})
	g.Expect(k8s.Delete(ctx, svc)).To(Succeed())
	cm := get(g, ns, name, &corev1.ConfigMap{})
	cm.Data[mbridge.ConfigMapKey] = "endpoint: ws://hijacked/v1/opamp\n"
	g.Expect(k8s.Update(ctx, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := get(g, ns, name, &corev1.Service{})
		g.Expect(got.UID).NotTo(Equal(svc.UID))
		g.Expect(get(g, ns, name, &corev1.ConfigMap{}).Data[mbridge.ConfigMapKey]).To(ContainSubstring("wss://elsewhere"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestCustomImageKeepsVersion: with spec.image the operator cannot know the version and leaves
// status.version alone; the custom image runs.
func TestCustomImageKeepsVersion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	br := newBridge(ns, "custom")
	br.Spec.Image = "registry.example.com/bridge:9.9.9"
	g.Expect(k8s.Create(ctx, br)).To(Succeed())
	g.Eventually(func(g Gomega) {
		dep := get(g, ns, "custom-opamp-bridge", &appsv1.Deployment{})
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example.com/bridge:9.9.9"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(get(g, ns, "custom", &v1alpha1.OpAMPBridge{}).Status.Version).To(BeEmpty())
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// createConverged creates a bridge for each name in ns and waits until each has its version
// and its Deployment.
func createConverged(t *testing.T, ns string, names ...string) {
	t.Helper()
	g := NewWithT(t)
	for _, n := range names {
		g.Expect(k8s.Create(context.Background(), newBridge(ns, n))).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		for _, n := range names {
			g.Expect(get(g, ns, n, &v1alpha1.OpAMPBridge{}).Status.Version).NotTo(BeEmpty())
			get(g, ns, n+"-opamp-bridge", &appsv1.Deployment{})
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestNoWritesWhenNothingChanged is the zero-write proof: once bridges have converged, resyncs
// (every 2s) reach the reconciler and the operator sends no write request.
func TestNoWritesWhenNothingChanged(t *testing.T) {
	ns := newNamespace(t)
	names := []string{"quiet-a", "quiet-b"}
	createConverged(t, ns, names...)
	// Only this test's namespace and cluster-scoped objects: another test's bridge may still see a
	// late Event series update in its own namespace.
	managertest.ExpectQuiet(t, writes, managertest.Quiet{Controller: "opampbridge", Namespace: ns,
		MinReconciles: 4 * float64(len(names)), What: "during the idle window"}, managertest.Idle(5*syncPeriod+time.Second))
}

// TestRestartWritesNothing is the restart proof: converged bridges, a new manager (empty caches,
// an applier that remembers nothing) reconciles them again and sends no write request.
func TestRestartWritesNothing(t *testing.T) {
	ns := newNamespace(t)
	names := []string{"restart-a", "restart-b"}
	createConverged(t, ns, names...)
	// The new manager must reconcile every bridge.
	managertest.ExpectQuiet(t, writes, managertest.Quiet{Controller: "opampbridge", Namespace: ns,
		MinReconciles: 2 * float64(len(names)), What: "after the restart"}, managertest.RestartThenWait(restart, 2*syncPeriod+time.Second))
}
