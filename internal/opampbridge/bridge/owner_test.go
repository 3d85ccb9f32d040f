package bridge

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/opampbridge/identity"
)

// TestIdentityAndLeaseOwnedByTheResource: a bridge run by an OpAMPBridge resource (found as the
// controller of the ConfigMap the operator generated for it) makes that resource an owner of its
// identity ConfigMap and its Lease, so that they are garbage collected with it; an identity
// ConfigMap made before gets the owner added (issue 14, item 13). envtest runs no garbage
// collector: the owner references are what is checked.
func TestIdentityAndLeaseOwnedByTheResource(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "owned")
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "opentelemetry.io/v1alpha1", "kind": "OpAMPBridge",
		"metadata": map[string]any{"name": "fleet.eu", "namespace": "owned"},
		"spec":     map[string]any{"endpoint": "ws://127.0.0.1:1/v1/opamp", "capabilities": map[string]any{"ReportsStatus": true}},
	}}
	g.Expect(env.Client.Create(ctx, cr)).To(Succeed())
	generated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "owned", Name: mbridge.Name("fleet.eu"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "opentelemetry.io/v1alpha1", Kind: "OpAMPBridge", Name: "fleet.eu", UID: cr.GetUID(), Controller: ptr.To(true)}}}}
	g.Expect(env.Client.Create(ctx, generated)).To(Succeed())
	// An identity ConfigMap left by an earlier version, without owner.
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "owned", Name: identity.ConfigMapName("fleet.eu"),
		Labels: map[string]string{identity.ManagedByLabel: identity.ManagedByValue}}, Data: map[string]string{"instanceUID": "0190b4f6-8b9c-7a3e-9d1f-2c3b4a5d6e7f"}}
	g.Expect(env.Client.Create(ctx, old)).To(Succeed())

	srv := startServer(t)
	cfg := testConfig(t, srv, "fleet.eu", "owned")
	cfg.LeaderElection = true
	startBridge(t, cfg, Options{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond})
	connected(g, srv)
	ownedBy := func(obj client.Object) []string {
		var uids []string
		for _, r := range obj.GetOwnerReferences() {
			if r.Kind == "OpAMPBridge" && r.Name == "fleet.eu" {
				uids = append(uids, string(r.UID))
			}
		}
		return uids
	}
	var cm corev1.ConfigMap
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "owned", Name: identity.ConfigMapName("fleet.eu")}, &cm)).To(Succeed())
	g.Expect(ownedBy(&cm)).To(Equal([]string{string(cr.GetUID())}))
	g.Expect(cm.Data).To(HaveKeyWithValue("instanceUID", "0190b4f6-8b9c-7a3e-9d1f-2c3b4a5d6e7f"), "the identity is kept")
	var lease coordinationv1.Lease
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "owned", Name: identity.LeaseName("fleet.eu")}, &lease)).To(Succeed())
	g.Expect(ownedBy(&lease)).To(Equal([]string{string(cr.GetUID())}))
	g.Expect(lease.Labels).To(HaveKeyWithValue(identity.ManagedByLabel, identity.ManagedByValue))
	g.Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).NotTo(BeEmpty(), "leader election works on the pre-created Lease")
}
