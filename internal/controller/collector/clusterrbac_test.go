package collector_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/naming"
)

// rbacConfig uses k8sattributes, which needs a ClusterRole.
const rbacConfig = `
receivers:
  otlp:
    protocols: {grpc: {endpoint: "0.0.0.0:4317"}}
processors:
  k8sattributes: {}
exporters:
  debug: {}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [k8sattributes], exporters: [debug]}
`

func createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func goneEventually(g Gomega, obj client.Object, what string) {
	g.Eventually(func(g Gomega) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), what)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// With namespace + name of 63 characters or more the instance label is truncated; the controller
// must still find the collector's ClusterRole and binding to prune and finalize them.
func TestClusterRBACOfLongNamesIsPrunedAndFinalized(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	name := "a-collector-with-a-name-long-enough-to-truncate-the-label-" + rand.String(4)
	g.Expect(len(ns) + 1 + len(name)).To(BeNumerically(">", 63))
	roleName := naming.ClusterRole(name, ns)
	bindingName := naming.ClusterRoleBinding(name, ns)

	col := newCollector(t, ns, name, v1beta1.ModeDeployment, rbacConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, "", roleName, &rbacv1.ClusterRole{})
		get(g, "", bindingName, &rbacv1.ClusterRoleBinding{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Prune: the config no longer needs cluster permissions.
	get(g, ns, name, col)
	col.Spec.Config.Processors = nil
	col.Spec.Config.Service.Pipelines["traces"].Processors = nil
	g.Expect(k8s.Update(ctx, col)).To(Succeed())
	goneEventually(g, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}}, "ClusterRole pruned")
	goneEventually(g, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: bindingName}}, "ClusterRoleBinding pruned")

	// Finalize: a second long-named collector is deleted.
	g.Expect(k8s.Delete(ctx, col)).To(Succeed())
	// (A different first letter: names are truncated from the end, and two collectors whose
	// generated names collide conflict, see TestClusterRBACNameCollisionAcrossNamespacesIsRefused.)
	col2 := newCollector(t, ns, "z"+name[1:]+"x", v1beta1.ModeDeployment, rbacConfig)
	g.Expect(k8s.Create(ctx, col2)).To(Succeed())
	role2, binding2 := naming.ClusterRole(col2.Name, ns), naming.ClusterRoleBinding(col2.Name, ns)
	g.Eventually(func(g Gomega) {
		get(g, "", role2, &rbacv1.ClusterRole{})
		get(g, "", binding2, &rbacv1.ClusterRoleBinding{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(k8s.Delete(ctx, col2)).To(Succeed())
	goneEventually(g, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role2}}, "ClusterRole finalized")
	goneEventually(g, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding2}}, "ClusterRoleBinding finalized")
	goneEventually(g, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: col2.Name}}, "collector gone")
}

// "x-prod" in namespace N and "x" in namespace "prod-N" get the same ClusterRole and binding
// names. The second collector must not take over the first one's objects: it is Stalled with
// reason OwnershipConflict, and deleting it leaves the first collector's RBAC alone.
func TestClusterRBACNameCollisionAcrossNamespacesIsRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nsA := "team-" + rand.String(5)
	nsB := "prod-" + nsA
	createNamespace(t, nsA)
	createNamespace(t, nsB)
	a := newCollector(t, nsA, "x-prod", v1beta1.ModeDeployment, rbacConfig)
	b := newCollector(t, nsB, "x", v1beta1.ModeDeployment, rbacConfig)
	roleName := naming.ClusterRole(a.Name, nsA)
	bindingName := naming.ClusterRoleBinding(a.Name, nsA)
	g.Expect(naming.ClusterRole(b.Name, nsB)).To(Equal(roleName), "the names collide")
	g.Expect(naming.ClusterRoleBinding(b.Name, nsB)).To(Equal(bindingName), "the names collide")

	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{}
	g.Eventually(func(g Gomega) { get(g, "", bindingName, binding) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(binding.Subjects).To(ConsistOf(HaveField("Namespace", nsA)))

	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cur := get(g, nsB, b.Name, &v1beta1.OpenTelemetryCollector{})
		c := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonOwnershipConflict))
		g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("OpenTelemetryCollector/%s/%s", nsA, a.Name)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &corev1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(nsB))).To(Succeed())
		found := false
		for _, e := range list.Items {
			found = found || (e.Reason == v1beta1.ReasonOwnershipConflict && e.Type == corev1.EventTypeWarning)
		}
		g.Expect(found).To(BeTrue(), "a Warning Event")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	get(g, "", bindingName, binding)
	g.Expect(binding.Subjects).To(ConsistOf(HaveField("Namespace", nsA)), "the binding still grants the first collector only")
	g.Expect(binding.Annotations["operator.opentelemetry.io/owner"]).To(Equal("OpenTelemetryCollector/" + nsA + "/" + a.Name))

	// Deleting the second collector does not delete the first one's RBAC.
	g.Expect(k8s.Delete(ctx, b)).To(Succeed())
	goneEventually(g, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: b.Name}}, "second collector gone")
	get(g, "", roleName, &rbacv1.ClusterRole{})
	get(g, "", bindingName, binding)
	g.Expect(binding.Subjects).To(ConsistOf(HaveField("Namespace", nsA)))

	// A same-named ClusterRole the operator did not create is not overwritten either.
	foreign := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: naming.ClusterRole("y", nsA)}}
	g.Expect(k8s.Create(ctx, foreign)).To(Succeed())
	c := newCollector(t, nsA, "y", v1beta1.ModeDeployment, rbacConfig)
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cur := get(g, nsA, "y", &v1beta1.OpenTelemetryCollector{})
		cond := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(v1beta1.ReasonOwnershipConflict))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	get(g, "", foreign.Name, foreign)
	g.Expect(foreign.Rules).To(BeEmpty(), "the user's ClusterRole is unchanged")
	g.Expect(strings.Join(keys(foreign.Labels), ",")).NotTo(ContainSubstring("managed-by"))

	// Deleting the stalled collector leaves the user's ClusterRole alone (and no stalled collector
	// behind for the tests that count writes).
	g.Expect(k8s.Delete(ctx, c)).To(Succeed())
	goneEventually(g, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: c.Name}}, "stalled collector gone")
	get(g, "", foreign.Name, foreign)
	g.Expect(foreign.Rules).To(BeEmpty())
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
