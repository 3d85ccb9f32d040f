package collector

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/collectorconfig"
)

// portsOfSection returns the Service ports of the used components of one section only (receivers or
// exporters), by inferring the ports of the config with the other section emptied.
func (s *state) portsOfSection(keep string) []corev1.ServicePort {
	drop := "exporters"
	if keep == "exporters" {
		drop = "receivers"
	}
	raw := make(map[string]any, len(s.raw))
	for k, v := range s.raw {
		raw[k] = v
	}
	raw[drop] = map[string]any{}
	return collectorconfig.InferPorts(collectorconfig.Parse(raw)).Service
}

// exposedPorts are the receiver ports merged with spec.ports: what Ingress, Route and HTTPRoute
// expose.
func (s *state) exposedPorts() []corev1.ServicePort {
	merged, _ := collectorconfig.MergePorts(userServicePorts(s.col.Spec.Ports), s.portsOfSection("receivers"))
	return merged
}
