package collector

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/internal/naming"
)

// prometheusExporterPorts are the names of the exporter ports whose name contains "prometheus".
func (s *state) prometheusExporterPorts() []string {
	var out []string
	for _, p := range s.portsOfSection("exporters") {
		if strings.Contains(p.Name, "prometheus") {
			out = append(out, p.Name)
		}
	}
	return out
}

// serviceMonitor is <name>-collector, scraping the base Service's Prometheus exporter ports; nil
// when there are none.
func (s *state) serviceMonitor() *unstructured.Unstructured {
	ports := s.prometheusExporterPorts()
	if len(ports) == 0 {
		return nil
	}
	endpoints := make([]any, len(ports))
	for i, p := range ports {
		endpoints[i] = map[string]any{"port": p}
	}
	return s.newServiceMonitor(naming.ServiceMonitor(s.col.Name), "base", endpoints)
}

// monitoringServiceMonitor is <name>-monitoring-collector, scraping the monitoring Service.
func (s *state) monitoringServiceMonitor() *unstructured.Unstructured {
	return s.newServiceMonitor(naming.ServiceMonitor(s.col.Name+"-monitoring"), "monitoring",
		[]any{map[string]any{"port": "monitoring"}})
}

func (s *state) newServiceMonitor(name, serviceType string, endpoints []any) *unstructured.Unstructured {
	labels := s.labels(name, false)
	for k, v := range s.col.Spec.Observability.Metrics.ExtraLabels {
		labels[k] = v
	}
	selector := s.selectorLabels()
	selector[ServiceTypeLabel] = serviceType
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": s.col.Namespace, "labels": stringMap(labels)},
		"spec": map[string]any{
			"endpoints":         endpoints,
			"namespaceSelector": map[string]any{"matchNames": []any{s.col.Namespace}},
			"selector":          map[string]any{"matchLabels": stringMap(selector)},
		},
	}}
	u.SetGroupVersionKind(ServiceMonitorGVK)
	return u
}
