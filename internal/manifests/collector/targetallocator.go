package collector

import (
	"maps"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// targetAllocator is the TargetAllocator <name> when spec.targetAllocator.enabled: the embedded
// spec moved to its own resource, which the target allocator controller turns into a workload. It
// carries the collector's labels (plus managed-by) and annotations.
func (s *state) targetAllocator() *v1alpha1.TargetAllocator {
	ta := &s.col.Spec.TargetAllocator
	if !ta.Enabled {
		return nil
	}
	labels := maps.Clone(s.col.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[manifestutils.LabelManagedBy] = manifestutils.ManagedBy
	out := &v1alpha1.TargetAllocator{
		TypeMeta: typeMeta(v1alpha1.GroupVersion, "TargetAllocator"),
		Spec: v1alpha1.TargetAllocatorSpec{
			OpenTelemetryCommonFields: v1beta1.OpenTelemetryCommonFields{
				Replicas:                  ta.Replicas,
				NodeSelector:              ta.NodeSelector,
				Resources:                 ta.Resources,
				ServiceAccount:            ta.ServiceAccount,
				Image:                     ta.Image,
				Affinity:                  ta.Affinity,
				SecurityContext:           ta.SecurityContext,
				PodSecurityContext:        ta.PodSecurityContext,
				TopologySpreadConstraints: ta.TopologySpreadConstraints,
				Tolerations:               ta.Tolerations,
				Env:                       ta.Env,
				PodAnnotations:            s.col.Spec.PodAnnotations,
				PodDisruptionBudget:       ta.PodDisruptionBudget,
			},
			AllocationStrategy:           ta.AllocationStrategy,
			FilterStrategy:               ta.FilterStrategy,
			PrometheusCR:                 ta.PrometheusCR,
			Observability:                ta.Observability,
			NetworkPolicy:                v1beta1.NetworkPolicy{Enabled: s.col.Spec.NetworkPolicy.Enabled},
			AllowInsecureAuthSecrets:     ta.AllowInsecureAuthSecrets,
			CollectorNotReadyGracePeriod: ta.CollectorNotReadyGracePeriod,
			Mtls:                         ta.Mtls,
		},
	}
	out.Name = s.col.Name
	out.Namespace = s.col.Namespace
	out.Labels = labels
	out.Annotations = maps.Clone(s.col.Annotations)
	return out
}
