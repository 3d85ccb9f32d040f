package apireconciler

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/openmcp-project/controller-utils/pkg/clusters"
	"github.com/openmcp-project/openmcp-operator/lib/clusteraccess"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/testenv"
)

// noAccess is cluster access that never has a cluster: CreateOrUpdate waits for it, Delete runs
// without it (the "access requests are gone" path), releasing it succeeds at once.
type noAccess struct{ clusteraccess.Reconciler }

func (noAccess) Reconcile(context.Context, ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{RequeueAfter: 1}, nil
}
func (noAccess) ReconcileDelete(context.Context, ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (noAccess) MCPCluster(context.Context, ctrl.Request) (*clusters.Cluster, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "accessrequests"}, "none")
}

// service is service logic whose Delete fails with deleteErr.
type service struct{ deleteErr error }

func (service) CreateOrUpdate(context.Context, *spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig, ClusterContext) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (s service) Delete(context.Context, *spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig, *ClusterContext) (ctrl.Result, error) {
	return ctrl.Result{}, s.deleteErr
}

const otherFinalizer = "example.com/someone-else"

// TestFinalizerPatchesAndDeletionErrors runs the framework against a real API server with the
// provider's CRDs. Another writer adds its own finalizer between the framework's read and its
// finalizer patch (hooked into the configuration read, which happens in between): the
// resourceVersion precondition makes the patch fail instead of replacing the whole list with a
// stale one. A failing Delete is shown in the status.
func TestFinalizerPatchesAndDeletionErrors(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, scheme := startProviderAPI(g)
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	c := env.Client

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t"}})).To(Succeed())
	g.Expect(c.Create(ctx, &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: spv1alpha1.ProviderConfigSpec{Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0"}}}})).To(Succeed())
	key := client.ObjectKey{Namespace: "t", Name: "o"}
	g.Expect(c.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}})).To(Succeed())

	// racer adds (or removes) otherFinalizer to the live object once, when armed, during the configuration read.
	armed, removeOther := false, false
	racer := func(ctx context.Context, cl client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, isConfig := obj.(*spv1alpha1.ProviderConfig); isConfig && armed {
			armed = false
			o := &spv1alpha1.OtelOperator{}
			if err := c.Get(ctx, key, o); err != nil {
				return err
			}
			if removeOther {
				controllerutil.RemoveFinalizer(o, otherFinalizer)
			} else {
				controllerutil.AddFinalizer(o, otherFinalizer)
			}
			if err := c.Update(ctx, o); err != nil {
				return err
			}
		}
		return cl.Get(ctx, k, obj, opts...)
	}
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	platform := interceptor.NewClient(wc, interceptor.Funcs{Get: racer})
	svc := &service{}
	ctl := New(Options[*spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig]{
		ProviderName: "p",
		NewObject:    func() *spv1alpha1.OtelOperator { return &spv1alpha1.OtelOperator{} },
		NewConfig:    func() *spv1alpha1.ProviderConfig { return &spv1alpha1.ProviderConfig{} },
		Onboarding:   c, Platform: platform, ClusterAccess: noAccess{}, Reconciler: svc,
	})
	req := ctrl.Request{NamespacedName: key}
	finalizers := func() []string {
		o := &spv1alpha1.OtelOperator{}
		g.Expect(c.Get(ctx, key, o)).To(Succeed())
		return o.Finalizers
	}

	t.Run("adding the finalizer does not drop one added meanwhile", func(t *testing.T) {
		g := NewWithT(t)
		armed = true
		_, err := ctl.Reconcile(ctx, req)
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
		g.Expect(finalizers()).To(Equal([]string{otherFinalizer}))
		_, err = ctl.Reconcile(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(finalizers()).To(ConsistOf(otherFinalizer, spv1alpha1.Finalizer))
	})

	t.Run("a deletion error is shown in the status", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(c.Delete(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}})).To(Succeed())
		svc.deleteErr = errors.New("the control plane said no")
		_, err := ctl.Reconcile(ctx, req)
		g.Expect(err).To(MatchError(svc.deleteErr))
		o := &spv1alpha1.OtelOperator{}
		g.Expect(c.Get(ctx, key, o)).To(Succeed())
		g.Expect(o.Status.Phase).To(Equal(spv1alpha1.Phase(PhaseTerminating)))
		ready := meta.FindStatusCondition(o.Status.Conditions, ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(ReasonReconcileError))
		g.Expect(ready.Message).To(ContainSubstring("the control plane said no"))
		g.Expect(o.Finalizers).To(ContainElement(spv1alpha1.Finalizer), "a failed deletion keeps the finalizer")
	})

	t.Run("removing the finalizer with a stale read fails instead of writing the stale list", func(t *testing.T) {
		g := NewWithT(t)
		// The framework has read [other, ours]; meanwhile the other controller removes its own.
		// Without the precondition the merge patch writes [other] back (the API server accepts
		// it): a finalizer its owner removed is resurrected and the object never goes away.
		svc.deleteErr = nil
		armed, removeOther = true, true
		_, err := ctl.Reconcile(ctx, req)
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
		g.Expect(finalizers()).To(Equal([]string{spv1alpha1.Finalizer}))
		_, err = ctl.Reconcile(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.Get(ctx, key, &spv1alpha1.OtelOperator{})).To(Satisfy(apierrors.IsNotFound), "deleted once ours is gone")
	})
}

// startProviderAPI starts a real API server with the service provider's CRDs and returns it with
// a scheme of the core kinds and the provider's.
func startProviderAPI(g Gomega) (*testenv.Env, *runtime.Scheme) {
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(spv1alpha1.AddToScheme(scheme)).To(Succeed())
	env, err := testenv.Start(testenv.Options{Scheme: scheme,
		CRDDirectoryPaths: []string{filepath.Join(testenv.RepoRoot(), "config", "service-provider", "crd")}})
	g.Expect(err).NotTo(HaveOccurred())
	return env, scheme
}
