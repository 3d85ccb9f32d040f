package collector

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/internal/naming"
)

// statefulSet is <name>-collector in statefulset mode: serviceName defaults to the headless
// Service and pods start in parallel unless spec.podManagementPolicy says otherwise.
func (s *state) statefulSet() *appsv1.StatefulSet {
	spec := &s.col.Spec
	serviceName := spec.ServiceName
	if serviceName == "" {
		serviceName = naming.HeadlessService(s.col.Name)
	}
	policy := spec.PodManagementPolicy
	if policy == "" {
		policy = appsv1.ParallelPodManagement
	}
	return &appsv1.StatefulSet{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "StatefulSet"),
		ObjectMeta: s.meta(naming.Collector(s.col.Name), true),
		Spec: appsv1.StatefulSetSpec{
			ServiceName:                          serviceName,
			Replicas:                             s.desiredReplicas(),
			Selector:                             &metav1.LabelSelector{MatchLabels: s.selectorLabels()},
			Template:                             s.podTemplate(),
			PodManagementPolicy:                  policy,
			VolumeClaimTemplates:                 spec.VolumeClaimTemplates,
			PersistentVolumeClaimRetentionPolicy: spec.PersistentVolumeClaimRetentionPolicy,
		},
	}
}
