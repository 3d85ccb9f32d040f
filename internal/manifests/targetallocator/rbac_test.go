package targetallocator

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/golden"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// TestRBACGolden: the Role and RoleBinding of a target allocator whose config discovers in its own
// namespace (endpointslices), cluster-wide (nodes), in another cluster (nothing) and through
// ServiceMonitors selected by namespace labels and PodMonitors of its own namespace: only what holds
// in its namespace and is not granted cluster-wide (manifestutils.TargetAllocatorRBAC) is here.
func TestRBACGolden(t *testing.T) {
	g := NewWithT(t)
	ta := loadTA(t, "rbac.yaml")
	opts := DefaultOptions()
	objs, err := Build(ta, nil, opts)
	g.Expect(err).NotTo(HaveOccurred())
	var out []client.Object
	for _, o := range objs {
		if k := o.GetObjectKind().GroupVersionKind().Kind; k == "Role" || k == "RoleBinding" {
			out = append(out, o)
		}
	}
	g.Expect(out).To(HaveLen(2))
	enc, err := manifestutils.Encode(out, "yaml")
	g.Expect(err).NotTo(HaveOccurred())
	golden.Check(t, "rbac.golden.yaml", enc)
}
