package collector

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// clusterRole is <name>-<namespace>-cluster-role with the rules the used components need; nil when
// they need none.
func (s *state) clusterRole() *rbacv1.ClusterRole {
	rules := collectorconfig.RBACRules(s.cfg)
	if len(rules) == 0 {
		return nil
	}
	meta := s.rbacMeta(naming.ClusterRole(s.col.Name, s.col.Namespace))
	return &rbacv1.ClusterRole{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRole"),
		ObjectMeta: meta,
		Rules:      rules,
	}
}
