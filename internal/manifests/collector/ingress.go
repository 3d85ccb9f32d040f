package collector

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// ingress is <name>-ingress when spec.ingress.type is ingress and there are receiver ports: one
// path /<port> per port (ruleType path) or one host <port>.<hostname> per port (subdomain). Its
// annotations are spec.ingress.annotations only.
func (s *state) ingress() *networkingv1.Ingress {
	in := &s.col.Spec.Ingress
	if in.Type != v1beta1.IngressTypeIngress || s.sidecar() {
		return nil
	}
	ports := s.exposedPorts()
	if len(ports) == 0 {
		return nil
	}
	prefix := networkingv1.PathTypePrefix
	backend := func(port string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: naming.Service(s.col.Name),
			Port: networkingv1.ServiceBackendPort{Name: port},
		}}
	}
	var rules []networkingv1.IngressRule
	switch in.RuleType {
	case v1beta1.IngressRuleTypeSubdomain:
		for _, p := range ports {
			portName, _ := collectorconfig.PortName(p.Name, p.Port)
			host := portName + "." + in.Hostname
			if in.Hostname == "" || in.Hostname == "*" {
				host = portName
			}
			rules = append(rules, networkingv1.IngressRule{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: backend(portName)}},
				}},
			})
		}
	default:
		paths := make([]networkingv1.HTTPIngressPath, len(ports))
		for i, p := range ports {
			portName, _ := collectorconfig.PortName(p.Name, p.Port)
			paths[i] = networkingv1.HTTPIngressPath{Path: "/" + p.Name, PathType: &prefix, Backend: backend(portName)}
		}
		rules = []networkingv1.IngressRule{{
			Host:             in.Hostname,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}},
		}}
	}
	name := naming.Ingress(s.col.Name)
	meta := s.meta(name, true)
	meta.Annotations = manifestutils.Clone(in.Annotations)
	return &networkingv1.Ingress{
		TypeMeta:   typeMeta(networkingv1.SchemeGroupVersion, "Ingress"),
		ObjectMeta: meta,
		Spec: networkingv1.IngressSpec{
			IngressClassName: in.IngressClassName,
			TLS:              in.TLS,
			Rules:            rules,
		},
	}
}
