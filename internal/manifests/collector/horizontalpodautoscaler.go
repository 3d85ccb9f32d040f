package collector

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/naming"
)

// horizontalPodAutoscaler is <name>-collector when spec.autoscaler is set. It scales the
// OpenTelemetryCollector through its scale subresource, not the workload, so that the CR stays the
// source of truth for replicas.
func (s *state) horizontalPodAutoscaler() *autoscalingv2.HorizontalPodAutoscaler {
	a := s.col.Spec.Autoscaler
	if a == nil {
		return nil
	}
	metrics := []autoscalingv2.MetricSpec{}
	resource := func(name corev1.ResourceName, target *int32) {
		if target == nil {
			return
		}
		t := *target
		metrics = append(metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   name,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &t},
			},
		})
	}
	resource(corev1.ResourceMemory, a.TargetMemoryUtilization)
	resource(corev1.ResourceCPU, a.TargetCPUUtilization)
	for _, m := range a.Metrics {
		if m.Type == autoscalingv2.PodsMetricSourceType {
			metrics = append(metrics, autoscalingv2.MetricSpec{Type: m.Type, Pods: m.Pods.DeepCopy()})
		}
	}
	var maxReplicas int32
	if a.MaxReplicas != nil {
		maxReplicas = *a.MaxReplicas
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   typeMeta(autoscalingv2.SchemeGroupVersion, "HorizontalPodAutoscaler"),
		ObjectMeta: s.meta(naming.Collector(s.col.Name), true),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				APIVersion: v1beta1.GroupVersion.String(),
				Kind:       "OpenTelemetryCollector",
				Name:       naming.DNSName(naming.Truncate("%s", 63, s.col.Name)),
			},
			MinReplicas: a.MinReplicas,
			MaxReplicas: maxReplicas,
			Metrics:     metrics,
			Behavior:    a.Behavior,
		},
	}
}
