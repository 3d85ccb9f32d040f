package operator

import (
	"testing"

	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParsePeers: --webhook-network-policy-from takes YAML or JSON peers; empty is the verified
// default; an empty list, a typo in a field and a non-list are refused at start-up.
func TestParsePeers(t *testing.T) {
	g := NewWithT(t)
	peers, err := parsePeers("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(peers).To(BeNil())
	peers, err = parsePeers(`[{ipBlock: {cidr: 10.0.0.0/16}}, {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}}]`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(peers).To(Equal([]networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/16"}},
		{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}},
	}))
	peers, err = parsePeers(`[{"ipBlock":{"cidr":"192.0.2.1/32"}}]`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(peers).To(HaveLen(1))
	for _, bad := range []string{"[]", "[{ipBlocks: {cidr: 10.0.0.0/8}}]", "ipBlock: {cidr: 10.0.0.0/8}"} {
		_, err = parsePeers(bad)
		g.Expect(err).To(MatchError(ContainSubstring("--webhook-network-policy-from")), bad)
	}
}
