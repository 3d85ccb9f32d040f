package collector_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// taRBACConfig discovers pods in every namespace and services in the allocator's own namespace.
const taRBACConfig = `
receivers:
  prometheus:
    config:
      scrape_configs:
      - job_name: pods
        kubernetes_sd_configs:
        - role: pod
      - job_name: services
        kubernetes_sd_configs:
        - role: service
          namespaces: {own_namespace: true}
exporters:
  debug: {}
service:
  pipelines:
    metrics: {receivers: [prometheus], exporters: [debug]}
`

// allowed asks the real API server's authorizer (a SubjectAccessReview) whether the
// ServiceAccount ns/sa may do verb on resource (of group) in namespace (empty: cluster-wide).
func allowed(g Gomega, ns, sa, verb, group, resource, namespace string) bool {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource,
		},
	}}
	g.Expect(k8s.Create(context.Background(), sar)).To(Succeed())
	return sar.Status.Allowed
}

// TestTargetAllocatorRBACGrantsWhatItsConfigDiscovers: the embedded target allocator's generated
// ServiceAccount may read pods everywhere (ClusterRole, owned by the collector) and services in
// its own namespace (Role), and nothing more; deleting the collector removes the cluster-scoped
// objects (its finalizer).
func TestTargetAllocatorRBACGrantsWhatItsConfigDiscovers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	other := newNamespace(t)
	const sa = "scrape-targetallocator"

	// Positive control: without the generated RBAC the API server denies the ServiceAccount.
	g.Expect(allowed(g, ns, sa, "list", "", "pods", other)).To(BeFalse(), "SubjectAccessReview must deny before the RBAC exists")

	col := newCollector(t, ns, "scrape", v1beta1.ModeStatefulSet, taRBACConfig)
	col.Spec.TargetAllocator.Enabled = true
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	name := manifestutils.TargetAllocatorClusterRBACName("scrape", ns)
	g.Eventually(func(g Gomega) {
		get(g, "", name, &rbacv1.ClusterRole{})
		get(g, "", name, &rbacv1.ClusterRoleBinding{})
		get(g, ns, sa, &rbacv1.Role{})
		get(g, ns, sa, &rbacv1.RoleBinding{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		for _, verb := range []string{"get", "list", "watch"} {
			g.Expect(allowed(g, ns, sa, verb, "", "pods", other)).To(BeTrue(), verb+" pods in another namespace")
			g.Expect(allowed(g, ns, sa, verb, "", "pods", "")).To(BeTrue(), verb+" pods cluster-wide")
			g.Expect(allowed(g, ns, sa, verb, "", "services", ns)).To(BeTrue(), verb+" services in its namespace")
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for _, denied := range []struct{ verb, group, resource, namespace string }{
		{"list", "", "services", other},
		{"list", "", "services", ""},
		{"get", "", "secrets", ns},
		{"list", "", "nodes", ""},
		{"create", "", "pods", ns},
		{"delete", "", "pods", other},
		{"list", "monitoring.coreos.com", "servicemonitors", ns},
		{"list", "discovery.k8s.io", "endpointslices", ns},
	} {
		g.Expect(allowed(g, ns, sa, denied.verb, denied.group, denied.resource, denied.namespace)).To(BeFalse(),
			"%s %s/%s in %q must be denied", denied.verb, denied.group, denied.resource, denied.namespace)
	}

	g.Expect(k8s.Delete(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRole{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ClusterRole removed")
		err = k8s.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRoleBinding{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ClusterRoleBinding removed")
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scrape"}, &v1beta1.OpenTelemetryCollector{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "collector gone once the finalizer ran")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
