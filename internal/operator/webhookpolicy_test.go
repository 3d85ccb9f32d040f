package operator_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/webhook/networkpolicy"
)

var policyNS atomic.Int32

const policyWebhookPort = 9443

var policySelector = map[string]string{"app.kubernetes.io/name": "opentelemetry-operator", "control-plane": "controller-manager"}

// setupPolicy creates the operator's namespace and webhook Service and returns a Keeper for them whose
// reachability is reached(policy as stored now).
func setupPolicy(t *testing.T, reached func(*networkingv1.NetworkPolicy) error) (*networkpolicy.Keeper, *atomic.Int32) {
	t.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("operator-%d", policyNS.Add(1))
	g := NewWithT(t)
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "webhook-service"},
		Spec: corev1.ServiceSpec{Selector: policySelector, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(policyWebhookPort)}}}})).To(Succeed())
	calls := &atomic.Int32{}
	k := &networkpolicy.Keeper{Client: env.Client, Reader: env.Client, Namespace: ns, ServiceName: "webhook-service", WebhookPort: policyWebhookPort,
		Attempts: 2,
		Reached: func(ctx context.Context) error {
			calls.Add(1)
			np := &networkingv1.NetworkPolicy{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: networkpolicy.DefaultName}, np)
			if err != nil {
				np = nil
			}
			return reached(np)
		}}
	return k, calls
}

func storedPolicy(g Gomega, k *networkpolicy.Keeper) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: k.Namespace, Name: networkpolicy.DefaultName}, np)).To(Succeed())
	return np
}

// apiServerPeers are the default peers: the API server's endpoint addresses (envtest advertises
// a documentation address) and kube-system.
func apiServerPeers(g Gomega) []networkingv1.NetworkPolicyPeer {
	slices := &discoveryv1.EndpointSliceList{}
	g.Expect(env.Client.List(context.Background(), slices, client.InNamespace("default"),
		client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"})).To(Succeed())
	var peers []networkingv1.NetworkPolicyPeer
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: a + "/32"}})
			}
		}
	}
	g.Expect(peers).To(HaveLen(1), "envtest's API server has one address")
	return append(peers, networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "kube-system"}}})
}

// TestDefaultPolicyAdmitsOnlyTheAPIServer: with the gate's defaults, the operator's pods (the
// webhook Service's selector) accept the webhook port only from the API server's endpoint
// addresses and kube-system, and every other port from anyone; the decision is kept (no new check)
// while the peers stay the same.
func TestDefaultPolicyAdmitsOnlyTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	k, calls := setupPolicy(t, func(*networkingv1.NetworkPolicy) error { return nil })
	state, err := k.Sync(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(networkpolicy.Restricted))
	np := storedPolicy(g, k)
	g.Expect(np.Annotations).To(HaveKeyWithValue(networkpolicy.StateAnnotation, networkpolicy.Restricted))
	g.Expect(np.Spec.PodSelector.MatchLabels).To(Equal(policySelector))
	g.Expect(np.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
	g.Expect(np.Spec.Ingress).To(HaveLen(2))
	tcp := corev1.ProtocolTCP
	g.Expect(np.Spec.Ingress[0].Ports).To(Equal([]networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromInt32(policyWebhookPort))}}))
	g.Expect(np.Spec.Ingress[0].From).To(Equal(apiServerPeers(g)))
	g.Expect(np.Spec.Ingress[1].From).To(BeEmpty(), "other ports: from anyone")
	for _, p := range np.Spec.Ingress[1].Ports {
		if *p.Protocol == corev1.ProtocolTCP {
			g.Expect(policyWebhookPort >= p.Port.IntVal && policyWebhookPort <= ptr.Deref(p.EndPort, p.Port.IntVal)).To(BeFalse(), "the webhook port is not among the open ones")
		}
	}
	g.Expect(np.Spec.Ingress[1].Ports).To(HaveLen(4), "TCP below and above the webhook port, UDP, SCTP")

	before := calls.Load()
	state, err = k.Sync(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(networkpolicy.Restricted))
	g.Expect(calls.Load()).To(Equal(before), "decided for these peers: not checked again")
	g.Expect(storedPolicy(g, k).ResourceVersion).To(Equal(np.ResourceVersion), "and not written again (a restart writes nothing)")
}

// TestDefaultPolicyOpensWhenItCutsOffTheAPIServer: where the API server's calls do not come from
// its endpoints' addresses (the check fails while the port is restricted), the port is opened
// again and the decision kept, so the webhooks keep working; a webhook that is not reached even
// open decides nothing.
func TestDefaultPolicyOpensWhenItCutsOffTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	k, calls := setupPolicy(t, func(np *networkingv1.NetworkPolicy) error {
		if np != nil && np.Annotations[networkpolicy.StateAnnotation] == networkpolicy.Restricted {
			return errors.New("timeout")
		}
		return nil
	})
	state, err := k.Sync(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(networkpolicy.Open))
	np := storedPolicy(g, k)
	g.Expect(np.Spec.Ingress[0].From).To(BeEmpty(), "the webhook port admits everyone again")
	before := calls.Load()
	state, err = k.Sync(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(networkpolicy.Open))
	g.Expect(calls.Load()).To(Equal(before), "not tried again for the same peers")

	down, _ := setupPolicy(t, func(*networkingv1.NetworkPolicy) error { return errors.New("connection refused") })
	_, err = down.Sync(context.Background())
	g.Expect(err).To(MatchError(ContainSubstring("no policy can be verified")))
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: down.Namespace, Name: networkpolicy.DefaultName},
		&networkingv1.NetworkPolicy{})).NotTo(Succeed(), "nothing applied while the webhook is down")
}

// TestConfiguredPeersAreKept: peers an administrator names replace the default and are kept even
// when the check fails.
func TestConfiguredPeersAreKept(t *testing.T) {
	g := NewWithT(t)
	k, _ := setupPolicy(t, func(*networkingv1.NetworkPolicy) error { return errors.New("timeout") })
	k.From = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/24"}}}
	state, err := k.Sync(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(networkpolicy.Restricted))
	g.Expect(storedPolicy(g, k).Spec.Ingress[0].From).To(Equal(k.From))
}
