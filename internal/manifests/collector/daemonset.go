package collector

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/internal/naming"
)

// daemonSet is <name>-collector in daemonset mode.
func (s *state) daemonSet() *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "DaemonSet"),
		ObjectMeta: s.meta(naming.Collector(s.col.Name), true),
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: s.selectorLabels()},
			Template:       s.podTemplate(),
			UpdateStrategy: s.col.Spec.DaemonSetUpdateStrategy,
		},
	}
}
