package collector

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// aggregationLabelPrefix starts the labels by which a ClusterRole joins an aggregated role
// ("rbac.authorization.k8s.io/aggregate-to-admin" and the like).
const aggregationLabelPrefix = "rbac.authorization.k8s.io/aggregate-to-"

// rbacMeta is s.meta for cluster-scoped RBAC objects: the collector's labels are copied as for
// every object, except labels that would make the ClusterRole join an aggregated role. Copying
// those would let anyone who can label a collector extend admin/edit/view (or any aggregated role)
// with the collector's rules without holding RBAC rights.
func (s *state) rbacMeta(name string) metav1.ObjectMeta {
	meta := s.meta(name, true)
	meta.Namespace = ""
	for k := range meta.Labels {
		if strings.HasPrefix(k, aggregationLabelPrefix) {
			delete(meta.Labels, k)
		}
	}
	return meta
}
