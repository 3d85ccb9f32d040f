package collector

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// podMonitor is <name>-collector for sidecar collectors: it scrapes the port "monitoring" (as
// upstream, although the container port is named "metrics") and the Prometheus exporter ports.
func (s *state) podMonitor() *unstructured.Unstructured {
	name := naming.PodMonitor(s.col.Name)
	endpoints := []any{map[string]any{"port": "monitoring"}}
	for _, p := range s.prometheusExporterPorts() {
		endpoints = append(endpoints, map[string]any{"port": p})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": s.col.Namespace, "labels": stringMap(s.labels(name, false))},
		"spec": map[string]any{
			"jobLabel": manifestutils.LabelInstance,
			"podTargetLabels": []any{
				manifestutils.LabelName, manifestutils.LabelInstance, manifestutils.LabelManagedBy,
			},
			"namespaceSelector":   map[string]any{"matchNames": []any{s.col.Namespace}},
			"selector":            map[string]any{"matchLabels": stringMap(s.selectorLabels())},
			"podMetricsEndpoints": endpoints,
		},
	}}
	u.SetGroupVersionKind(PodMonitorGVK)
	return u
}
