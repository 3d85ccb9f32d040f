package apireconciler

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
)

// TestKeptLabels: the labels of Options.Labels go on the object with the finalizer, a user's
// other labels stay, and a changed value is written back on the next reconcile (a real API server).
func TestKeptLabels(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, _ := startProviderAPI(g)
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	c := env.Client
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t"}})).To(Succeed())
	g.Expect(c.Create(ctx, &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: spv1alpha1.ProviderConfigSpec{Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0"}}}})).To(Succeed())
	key := client.ObjectKey{Namespace: "t", Name: "o"}
	g.Expect(c.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{"mine": "yes"}},
		Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}})).To(Succeed())
	ctl := New(Options[*spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig]{
		ProviderName: "p",
		NewObject:    func() *spv1alpha1.OtelOperator { return &spv1alpha1.OtelOperator{} },
		NewConfig:    func() *spv1alpha1.ProviderConfig { return &spv1alpha1.ProviderConfig{} },
		Onboarding:   c, Platform: c, ClusterAccess: noAccess{}, Reconciler: &service{},
		Labels: func(o *spv1alpha1.OtelOperator) map[string]string {
			return map[string]string{"example.com/id": o.Namespace + "." + o.Name}
		},
	})
	labels := func() map[string]string {
		o := &spv1alpha1.OtelOperator{}
		g.Expect(c.Get(ctx, key, o)).To(Succeed())
		return o.Labels
	}
	_, err := ctl.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(labels()).To(Equal(map[string]string{"mine": "yes", "example.com/id": "t.o"}))

	o := &spv1alpha1.OtelOperator{}
	g.Expect(c.Get(ctx, key, o)).To(Succeed())
	o.Labels["example.com/id"] = "forged"
	g.Expect(c.Update(ctx, o)).To(Succeed())
	_, err = ctl.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(labels()).To(Equal(map[string]string{"mine": "yes", "example.com/id": "t.o"}))
}
