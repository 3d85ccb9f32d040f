package collector

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/internal/naming"
)

// deployment is <name>-collector in deployment mode.
func (s *state) deployment() *appsv1.Deployment {
	meta := s.meta(naming.Collector(s.col.Name), true)
	return &appsv1.Deployment{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: s.desiredReplicas(),
			Selector: &metav1.LabelSelector{MatchLabels: s.selectorLabels()},
			Strategy: s.col.Spec.DeploymentUpdateStrategy,
			Template: s.podTemplate(),
		},
	}
}
