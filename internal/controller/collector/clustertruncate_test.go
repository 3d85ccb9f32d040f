package collector_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/controller/collector"
	"github.com/otelop/otelop/internal/naming"
)

// upstreamRBAC creates the ClusterRole and ClusterRoleBinding upstream's operator makes for
// collector ns/name: its generated names, managed-by and (truncated) instance labels, the
// collector's ServiceAccount as the subject, no owner annotation. The role grants only
// "get nodes", so that a takeover (which writes the collector's rules) shows.
func upstreamRBAC(t *testing.T, ns, name string) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	t.Helper()
	labels := map[string]string{collector.ManagedByLabel: collector.ManagedByValue, collector.InstanceLabel: naming.Instance(ns, name)}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ClusterRole(name, ns), Labels: labels},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ClusterRoleBinding(name, ns), Labels: labels},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: naming.Collector(name)}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
	}
	ctx := context.Background()
	if err := k8s.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8s.Delete(ctx, binding)
		_ = k8s.Delete(ctx, role)
	})
	return role, binding
}

// TestTruncatedNamesDoNotAdoptAnotherTenantsRBAC is the attack of issue 29, finding 8. Two
// namespaces of 62 characters that differ only in the last one, each with a collector "a": upstream
// gives both collectors the same ClusterRole and ClusterRoleBinding names and the same instance
// label (all truncated). Upstream made tenant A's objects; tenant B's collector used to adopt them
// by those labels, rewriting A's role and binding its own ServiceAccount instead of A's. Now B is
// Stalled with reason OwnershipConflict (and a Warning Event) and A's objects are unchanged.
// Positive control: a collector whose "<namespace>.<name>" fits a label adopts the objects
// upstream made for it.
func TestTruncatedNamesDoNotAdoptAnotherTenantsRBAC(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	prefix := "tenant-" + rand.String(5) + "-"
	prefix += strings.Repeat("n", 61-len(prefix))
	nsA, nsB := prefix+"a", prefix+"b"
	createNamespace(t, nsA)
	createNamespace(t, nsB)
	g.Expect(naming.ClusterRole("a", nsB)).To(Equal(naming.ClusterRole("a", nsA)), "the names collide")
	g.Expect(naming.ClusterRoleBinding("a", nsB)).To(Equal(naming.ClusterRoleBinding("a", nsA)), "the names collide")
	g.Expect(naming.Instance(nsB, "a")).To(Equal(naming.Instance(nsA, "a")), "the labels collide")

	role, binding := upstreamRBAC(t, nsA, "a")
	b := newCollector(t, nsB, "a", v1beta1.ModeDeployment, rbacConfig)
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cur := get(g, nsB, "a", &v1beta1.OpenTelemetryCollector{})
		c := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonOwnershipConflict))
		g.Expect(c.Message).To(ContainSubstring(role.Name))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &corev1.EventList{}
		g.Expect(k8s.List(ctx, list)).To(Succeed())
		found := false
		for _, e := range list.Items {
			found = found || (e.Reason == v1beta1.ReasonOwnershipConflict && e.Type == corev1.EventTypeWarning && e.InvolvedObject.Namespace == nsB)
		}
		g.Expect(found).To(BeTrue(), "a Warning Event on B's collector")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	gotRole := get(g, "", role.Name, &rbacv1.ClusterRole{})
	g.Expect(gotRole.Rules).To(Equal(role.Rules), "A's role is not rewritten")
	g.Expect(gotRole.Annotations).NotTo(HaveKey("operator.opentelemetry.io/owner"))
	gotBinding := get(g, "", binding.Name, &rbacv1.ClusterRoleBinding{})
	g.Expect(gotBinding.Subjects).To(Equal(binding.Subjects), "A's binding still grants A's ServiceAccount only")
	g.Expect(gotBinding.Annotations).NotTo(HaveKey("operator.opentelemetry.io/owner"))

	// Deleting B leaves A's objects alone.
	g.Expect(k8s.Delete(ctx, b)).To(Succeed())
	goneEventually(g, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "a"}}, "B gone")
	get(g, "", role.Name, &rbacv1.ClusterRole{})
	get(g, "", binding.Name, &rbacv1.ClusterRoleBinding{})

	// Control: an untruncated label names its collector in full; the collector adopts its objects.
	nsC := newNamespace(t)
	role, binding = upstreamRBAC(t, nsC, "c")
	c := newCollector(t, nsC, "c", v1beta1.ModeDeployment, rbacConfig)
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		r := get(g, "", role.Name, &rbacv1.ClusterRole{})
		g.Expect(r.Annotations).To(HaveKeyWithValue("operator.opentelemetry.io/owner", "OpenTelemetryCollector/"+nsC+"/c"))
		g.Expect(r.Rules).NotTo(Equal(role.Rules), "the collector's rules")
		bd := get(g, "", binding.Name, &rbacv1.ClusterRoleBinding{})
		g.Expect(bd.Annotations).To(HaveKeyWithValue("operator.opentelemetry.io/owner", "OpenTelemetryCollector/"+nsC+"/c"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	cur := get(g, nsC, "c", &v1beta1.OpenTelemetryCollector{})
	g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)).To(Or(BeNil(), HaveField("Status", metav1.ConditionFalse)))
	g.Expect(k8s.Delete(ctx, c)).To(Succeed())
	goneEventually(g, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: nsC, Name: "c"}}, "C gone")
}
