package collector

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/internal/naming"
)

// networkPolicy is <name>-collector-networkpolicy when spec.networkPolicy.enabled is true: ingress to
// the collector pods is allowed on every container port (TCP, as upstream) and nothing else.
func (s *state) networkPolicy() *networkingv1.NetworkPolicy {
	if e := s.col.Spec.NetworkPolicy.Enabled; e == nil || !*e {
		return nil
	}
	rule := networkingv1.NetworkPolicyIngressRule{}
	for _, p := range s.containerPorts() {
		tcp := corev1.ProtocolTCP
		port := intstr.FromInt32(p.ContainerPort)
		rule.Ports = append(rule.Ports, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &port})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta(networkingv1.SchemeGroupVersion, "NetworkPolicy"),
		ObjectMeta: s.meta(naming.NetworkPolicy(s.col.Name), true),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: s.selectorLabels()},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{rule},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}
