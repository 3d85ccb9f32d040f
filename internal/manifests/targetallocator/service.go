package targetallocator

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// service is <name>-targetallocator, port 80 "targetallocation" to the container's http port: the
// endpoint the collectors' prometheus receivers are pointed at.
func (s *state) service() *corev1.Service {
	m := s.meta(Name(s.ta.Name))
	m.Annotations = nil // upstream copies no annotations onto the Service
	ports := []corev1.ServicePort{{Name: ServicePortName, Port: ServicePort, TargetPort: intstr.FromString(HTTPPortName)}}
	if s.mtls() {
		ports = append(ports, httpsServicePort())
	}
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Selector:            SelectorLabels(s.ta),
			Ports:               ports,
			IPFamilies:          s.ta.Spec.IpFamilies,
			IPFamilyPolicy:      s.ta.Spec.IpFamilyPolicy,
			TrafficDistribution: s.ta.Spec.TrafficDistribution,
		},
	}
}

// podDisruptionBudget is <name>-targetallocator: spec.podDisruptionBudget or maxUnavailable 1. It
// is not generated with allocation strategy least-weighted, whose targets move whenever a pod
// goes, so a budget protects nothing.
func (s *state) podDisruptionBudget(configHash string) *policyv1.PodDisruptionBudget {
	if s.ta.Spec.AllocationStrategy == v1beta1.TargetAllocatorAllocationStrategyLeastWeighted {
		return nil
	}
	meta := s.meta(Name(s.ta.Name))
	meta.Annotations = s.podAnnotations(configHash) // as upstream's: the pod template's annotations
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta(policyv1.SchemeGroupVersion, "PodDisruptionBudget"),
		ObjectMeta: meta,
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(s.ta)}},
	}
	if p := s.ta.Spec.PodDisruptionBudget; p != nil {
		pdb.Spec.MinAvailable = p.MinAvailable
		pdb.Spec.MaxUnavailable = p.MaxUnavailable
	} else {
		one := intstr.FromInt32(1)
		pdb.Spec.MaxUnavailable = &one
	}
	return pdb
}

// networkPolicy is <name>-targetallocator-networkpolicy when spec.networkPolicy.enabled is true:
// ingress on every container port and egress to the API server only (TCP 6443), as upstream.
func (s *state) networkPolicy() *networkingv1.NetworkPolicy {
	if e := s.ta.Spec.NetworkPolicy.Enabled; e == nil || !*e {
		return nil
	}
	tcp := corev1.ProtocolTCP
	ingress := networkingv1.NetworkPolicyIngressRule{}
	for _, p := range s.containerPorts() {
		port := intstr.FromInt32(p.ContainerPort)
		ingress.Ports = append(ingress.Ports, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &port})
	}
	apiServer := intstr.FromInt32(APIServerPort)
	meta := s.meta(NetworkPolicyName(s.ta.Name))
	meta.Annotations = s.podAnnotations("") // as upstream's: the pod template's, without the hash
	return &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta(networkingv1.SchemeGroupVersion, "NetworkPolicy"),
		ObjectMeta: meta,
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: manifestutils.SelectorLabels(s.ta.ObjectMeta, ComponentTargetAllocator)},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{ingress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &apiServer}},
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
}

// serviceMonitor is <name>-targetallocator, scraping the Service's targetallocation port, when
// spec.observability.metrics.enableMetrics is set and the Prometheus Operator's CRDs are served.
func (s *state) serviceMonitor() *unstructured.Unstructured {
	if !s.ta.Spec.Observability.Metrics.EnableMetrics || !s.opts.PrometheusCRDs {
		return nil
	}
	name := Name(s.ta.Name)
	labels := map[string]any{}
	for k, v := range s.labels(name) {
		labels[k] = v
	}
	for k, v := range s.ta.Spec.Observability.Metrics.ExtraLabels {
		labels[k] = v
	}
	selector := map[string]any{}
	for k, v := range SelectorLabels(s.ta) {
		selector[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": s.ta.Namespace, "labels": labels},
		"spec": map[string]any{
			"endpoints":         []any{map[string]any{"port": ServicePortName}},
			"namespaceSelector": map[string]any{"matchNames": []any{s.ta.Namespace}},
			"selector":          map[string]any{"matchLabels": selector},
		},
	}}
	u.SetGroupVersionKind(ServiceMonitorGVK)
	return u
}
