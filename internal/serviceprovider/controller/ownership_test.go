package controller

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// TestNamespaceRemovalSeesEverything deletes a namespace the provider created, on a real API
// server, only when it can prove the namespace holds nothing else: an object whose owner is not
// in the namespace is the tenant's and keeps it; a resource group whose discovery fails (an
// aggregated API that does not answer) stops the deletion with an error instead of being
// skipped. Positive controls: an object owned by one of the provider's objects goes with it, and
// once discovery works again the namespace is deleted.
func TestNamespaceRemovalSeesEverything(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start(testenv.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	c, id := env.Client, instance.ID("tenant", "cp")
	deleting := func(ns string) bool {
		o := &corev1.Namespace{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
		return o.DeletionTimestamp != nil
	}
	create := func(ns, name string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owners}}
		g.Expect(c.Create(ctx, cm)).To(Succeed())
		return cm
	}

	t.Run("an owner reference to nothing in the namespace does not make an object the provider's", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(c.Create(ctx, namespace("owners", id))).To(Succeed())
		parent := create("owners", "parent", instance.Labels(id))
		create("owners", "child", nil, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID})
		create("owners", "tenant-data", nil, metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "anything", UID: "0b9e2c1e-0000-4000-8000-000000000001"})
		gone, kept, err := removeNamespace(ctx, c, env.Config, "owners", id)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gone).To(BeTrue())
		g.Expect(kept).To(And(ContainSubstring("ConfigMap/tenant-data"), Not(ContainSubstring("ConfigMap/child"))))
		g.Expect(deleting("owners")).To(BeFalse(), "the tenant's object is deleted with the namespace")

		// Positive control: without the tenant's object the namespace goes, the owned child with it.
		g.Expect(c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenant-data", Namespace: "owners"}})).To(Succeed())
		_, kept, err = removeNamespace(ctx, c, env.Config, "owners", id)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(kept).To(BeEmpty())
		g.Expect(deleting("owners")).To(BeTrue())
	})

	t.Run("a resource group that cannot be discovered stops the deletion", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(c.Create(ctx, namespace("blind", id))).To(Succeed())
		// An aggregated API whose Service does not exist: the API server marks it unavailable
		// without connecting anywhere, and its group fails discovery.
		svc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1.hidden.example.com"},
			"spec": map[string]any{"group": "hidden.example.com", "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(10),
				"insecureSkipTLSVerify": true, "service": map[string]any{"namespace": "default", "name": "nobody"}},
		}}
		g.Expect(c.Create(ctx, svc)).To(Succeed())
		dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func() bool {
			_, err := dc.ServerPreferredNamespacedResources()
			return discovery.IsGroupDiscoveryFailedError(err)
		}).WithTimeout(time.Minute).Should(BeTrue(), "the API server never reported the group unavailable")

		_, _, err = removeNamespace(ctx, c, env.Config, "blind", id)
		g.Expect(err).To(MatchError(And(ContainSubstring("namespace blind is not deleted"), ContainSubstring("hidden.example.com"))))
		g.Expect(deleting("blind")).To(BeFalse())

		// Positive control: once the group is gone, the namespace is deleted.
		g.Expect(c.Delete(ctx, svc)).To(Succeed())
		g.Eventually(func() error {
			_, err := dc.ServerPreferredNamespacedResources()
			return err
		}).WithTimeout(time.Minute).Should(Succeed())
		_, kept, err := removeNamespace(ctx, c, env.Config, "blind", id)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(kept).To(BeEmpty())
		g.Expect(deleting("blind")).To(BeTrue())
	})
}
