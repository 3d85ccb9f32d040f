package collector

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/internal/naming"
)

// podDisruptionBudget is <name>-collector: spec.podDisruptionBudget or maxUnavailable 1. As
// upstream, it selects the pods by all of the object's labels.
func (s *state) podDisruptionBudget() *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta(policyv1.SchemeGroupVersion, "PodDisruptionBudget"),
		ObjectMeta: s.meta(naming.Collector(s.col.Name), true),
	}
	if p := s.col.Spec.PodDisruptionBudget; p != nil {
		pdb.Spec.MinAvailable = p.MinAvailable
		pdb.Spec.MaxUnavailable = p.MaxUnavailable
	} else {
		one := intstr.FromInt32(1)
		pdb.Spec.MaxUnavailable = &one
	}
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: s.labels(naming.Collector(s.col.Name), true)}
	return pdb
}
