package collector

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// clusterRoleBinding is <name>-<namespace>-collector, binding the cluster role to the collector's
// ServiceAccount; nil when the components need no rules.
func (s *state) clusterRoleBinding() *rbacv1.ClusterRoleBinding {
	if len(collectorconfig.RBACRules(s.cfg)) == 0 {
		return nil
	}
	meta := s.rbacMeta(naming.ClusterRoleBinding(s.col.Name, s.col.Namespace))
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRoleBinding"),
		ObjectMeta: meta,
		Subjects: []rbacv1.Subject{{
			Kind: "ServiceAccount", Name: s.serviceAccountName(), Namespace: s.col.Namespace,
		}},
		RoleRef: rbacv1.RoleRef{
			APIGroup: rbacv1.GroupName,
			Kind:     "ClusterRole",
			Name:     naming.ClusterRole(s.col.Name, s.col.Namespace),
		},
	}
}
