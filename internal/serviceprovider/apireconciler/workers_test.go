package apireconciler

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/openmcp-project/controller-utils/pkg/clusters"
	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	commonapi "github.com/openmcp-project/openmcp-operator/api/common"
	"github.com/openmcp-project/openmcp-operator/lib/clusteraccess"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/testenv"
)

// grantedAccess is cluster access that is always granted (the clusters are never used here).
type grantedAccess struct{ clusteraccess.Reconciler }

func (grantedAccess) Reconcile(context.Context, ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (grantedAccess) MCPCluster(context.Context, ctrl.Request) (*clusters.Cluster, error) {
	return clusters.New("mcp"), nil
}
func (grantedAccess) WorkloadCluster(context.Context, ctrl.Request) (*clusters.Cluster, error) {
	return clusters.New("workload"), nil
}
func (grantedAccess) MCPAccessRequest(context.Context, ctrl.Request) (*clustersv1alpha1.AccessRequest, error) {
	return granted(), nil
}
func (grantedAccess) WorkloadAccessRequest(context.Context, ctrl.Request) (*clustersv1alpha1.AccessRequest, error) {
	return granted(), nil
}

func granted() *clustersv1alpha1.AccessRequest {
	return &clustersv1alpha1.AccessRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "mcp--x"},
		Status: clustersv1alpha1.AccessRequestStatus{SecretRef: &commonapi.LocalObjectReference{Name: "kubeconfig"}}}
}

// hangingService stands in for the service logic of an object whose control plane does not
// answer: its requests block until their context ends. Every other object is ready at once.
type hangingService struct{ started chan struct{} }

func (s hangingService) CreateOrUpdate(ctx context.Context, obj *spv1alpha1.OtelOperator, _ *spv1alpha1.ProviderConfig, _ ClusterContext) (ctrl.Result, error) {
	if obj.Name == "unreachable" {
		select {
		case s.started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctrl.Result{}, ctx.Err()
	}
	Ready(obj, "Ok", "ready")
	return ctrl.Result{}, nil
}
func (hangingService) Delete(context.Context, *spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig, *ClusterContext) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// TestUnreachableClusterDoesNotHoldUpOthers runs the controller in a manager: while one object's
// reconcile hangs on a cluster that does not answer, another tenant's object is reconciled at
// once (several workers), and the hanging reconcile ends at ReconcileTimeout with the deadline in
// its status.
func TestUnreachableClusterDoesNotHoldUpOthers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, scheme := startProviderAPI(g)
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	c := env.Client

	mgr, platform := startManager(g, env, scheme)
	svc := hangingService{started: make(chan struct{}, 1)}
	const timeout = 8 * time.Second
	ctl := New(Options[*spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig]{
		ProviderName: "p",
		NewObject:    func() *spv1alpha1.OtelOperator { return &spv1alpha1.OtelOperator{} },
		NewConfig:    func() *spv1alpha1.ProviderConfig { return &spv1alpha1.ProviderConfig{} },
		Onboarding:   mgr.GetClient(), Platform: c, ClusterAccess: grantedAccess{}, Reconciler: svc,
		ReconcileTimeout: timeout,
	})
	g.Expect(ctl.SetupWithManager(mgr, platform, func() client.ObjectList { return &spv1alpha1.OtelOperatorList{} })).To(Succeed())
	mgrCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { _ = mgr.Start(mgrCtx); close(stopped) }()
	// The manager stops before the API server (deferred calls run last first).
	defer func() { cancel(); <-stopped }()

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t"}})).To(Succeed())
	g.Expect(c.Create(ctx, &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: spv1alpha1.ProviderConfigSpec{PollInterval: &metav1.Duration{Duration: time.Hour}, Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0"}}}})).To(Succeed())
	create := func(name string) {
		g.Expect(c.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "t"},
			Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}})).To(Succeed())
	}
	ready := func(name string) func(Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			o := &spv1alpha1.OtelOperator{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "t", Name: name}, o)).To(Succeed())
			return meta.FindStatusCondition(o.Status.Conditions, ConditionReady)
		}
	}
	create("unreachable")
	g.Eventually(svc.started).WithTimeout(30*time.Second).Should(Receive(), "the hanging reconcile started")
	start := time.Now()
	create("fine")
	// With one worker the second object would wait the whole timeout.
	g.Eventually(ready("fine")).WithTimeout(timeout / 2).WithPolling(100 * time.Millisecond).Should(HaveField("Status", metav1.ConditionTrue))
	t.Logf("the other object was ready %s after it was created, while the first hung", time.Since(start).Round(time.Millisecond))
	// Without the timeout the hanging reconcile would never end.
	g.Eventually(ready("unreachable")).WithTimeout(2 * timeout).WithPolling(200 * time.Millisecond).Should(And(
		HaveField("Reason", ReasonReconcileError), HaveField("Message", ContainSubstring("context deadline exceeded"))))
}

// startManager is a manager on env (no metrics or probe servers) holding the platform cluster
// the controller under test reads, as the provider's run does.
func startManager(g Gomega, env *testenv.Env, scheme *runtime.Scheme) (ctrl.Manager, cluster.Cluster) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	g.Expect(err).NotTo(HaveOccurred())
	platform, err := cluster.New(env.Config, func(o *cluster.Options) { o.Scheme = scheme })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mgr.Add(platform)).To(Succeed())
	return mgr, platform
}
