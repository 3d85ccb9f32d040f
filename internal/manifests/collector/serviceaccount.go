package collector

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/naming"
)

// serviceAccount is <name>-collector, unless spec.serviceAccount names an existing one.
func (s *state) serviceAccount() *corev1.ServiceAccount {
	if s.col.Spec.ServiceAccount != "" {
		return nil
	}
	return &corev1.ServiceAccount{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ServiceAccount"),
		ObjectMeta: s.meta(naming.Collector(s.col.Name), false),
	}
}
