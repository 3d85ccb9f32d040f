package collector

import (
	"testing"

	. "github.com/onsi/gomega"
)

// A label on the collector must not make its ClusterRole join an aggregated role (admin, edit,
// view...): that would grant the collector's rules to every holder of that role.
func TestClusterRBACDropsAggregationLabels(t *testing.T) {
	g := NewWithT(t)
	opts := DefaultOptions()
	opts.CreateRBAC = true
	col := loadCR(t, "rbac.yaml", opts)
	if col.Labels == nil {
		col.Labels = map[string]string{}
	}
	col.Labels["rbac.authorization.k8s.io/aggregate-to-admin"] = "true"
	col.Labels["rbac.authorization.k8s.io/aggregate-to-view"] = "true"
	col.Labels["team"] = "a"
	objs, err := Build(col, opts)
	g.Expect(err).NotTo(HaveOccurred())
	seen := 0
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if kind != "ClusterRole" && kind != "ClusterRoleBinding" {
			continue
		}
		seen++
		g.Expect(o.GetLabels()).NotTo(HaveKey("rbac.authorization.k8s.io/aggregate-to-admin"), kind)
		g.Expect(o.GetLabels()).NotTo(HaveKey("rbac.authorization.k8s.io/aggregate-to-view"), kind)
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("team", "a"), kind+": other labels are still copied")
	}
	g.Expect(seen).To(Equal(2))
}
