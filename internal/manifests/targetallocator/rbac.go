package targetallocator

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// role and roleBinding grant the generated ServiceAccount the rules it needs in its own namespace
// (manifestutils.TargetAllocatorRBAC's Namespaced); nil when it needs none. The Cluster part is the
// collector builder's (cluster-scoped objects cannot carry the TargetAllocator's owner reference).
func (s *state) role(p manifestutils.Permissions) *rbacv1.Role {
	if len(p.Namespaced) == 0 {
		return nil
	}
	return &rbacv1.Role{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion, "Role"), ObjectMeta: s.meta(Name(s.ta.Name)), Rules: p.Namespaced}
}

func (s *state) roleBinding(p manifestutils.Permissions) *rbacv1.RoleBinding {
	if len(p.Namespaced) == 0 {
		return nil
	}
	return &rbacv1.RoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "RoleBinding"),
		ObjectMeta: s.meta(Name(s.ta.Name)),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Name(s.ta.Name), Namespace: s.ta.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: Name(s.ta.Name)},
	}
}
