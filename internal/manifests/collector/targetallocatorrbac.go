package collector

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// targetAllocatorClusterRBAC is the cluster-scoped part of the embedded target allocator's RBAC
// (manifestutils.TargetAllocatorRBAC), "<name>-<namespace>-targetallocator": the TargetAllocator's
// controller applies the Role of its own namespace, but a cluster-scoped object cannot carry the
// TargetAllocator's owner reference, so the collector owns these (cluster owner annotation,
// removed by its finalizer). Nil when the target allocator is not enabled, runs under a
// ServiceAccount the user names (the user's RBAC, as upstream), or reads its own namespace only.
func (s *state) targetAllocatorClusterRBAC() (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, error) {
	ta := s.targetAllocator()
	if ta == nil || ta.Spec.ServiceAccount != "" {
		return nil, nil, nil
	}
	perms, err := manifestutils.TargetAllocatorRBAC(*ta, s.col, s.opts.TargetAllocatorMTLS)
	if err != nil || len(perms.Cluster) == 0 {
		return nil, nil, err
	}
	name := manifestutils.TargetAllocatorClusterRBACName(s.col.Name, s.col.Namespace)
	meta := s.rbacMeta(name)
	meta.Labels[manifestutils.LabelComponent] = manifestutils.ComponentTargetAllocator
	role := &rbacv1.ClusterRole{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion, "ClusterRole"), ObjectMeta: meta, Rules: perms.Cluster}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRoleBinding"),
		ObjectMeta: *meta.DeepCopy(),
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Name: naming.TargetAllocator(s.col.Name), Namespace: s.col.Namespace,
		}},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
	}
	return role, binding, nil
}
