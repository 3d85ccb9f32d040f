package apireconciler

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/openmcp-project/controller-utils/pkg/clusters"
	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	"github.com/openmcp-project/openmcp-operator/lib/clusteraccess"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
)

// blackHole accepts TCP connections on 127.0.0.1 and never answers (it neither reads nor
// writes): a control plane that is there but does not respond.
func blackHole(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// realAccess hands out clusters the way the cluster access library does (clients built from a
// REST config, no timeout): objects named unreachable-* get the black hole, the others the test
// API server.
type realAccess struct {
	clusteraccess.Reconciler
	good, bad *rest.Config
	scheme    *runtime.Scheme
}

func (a realAccess) cluster(req ctrl.Request, id string) (*clusters.Cluster, error) {
	cfg := a.good
	if strings.HasPrefix(req.Name, "unreachable") {
		cfg = a.bad
	}
	c := clusters.New(id).WithRESTConfig(rest.CopyConfig(cfg))
	return c, c.InitializeClient(a.scheme)
}
func (realAccess) Reconcile(context.Context, ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (a realAccess) MCPCluster(_ context.Context, req ctrl.Request) (*clusters.Cluster, error) {
	return a.cluster(req, "mcp")
}
func (a realAccess) WorkloadCluster(_ context.Context, req ctrl.Request) (*clusters.Cluster, error) {
	return a.cluster(req, "workload")
}
func (realAccess) MCPAccessRequest(context.Context, ctrl.Request) (*clustersv1alpha1.AccessRequest, error) {
	return granted(), nil
}
func (realAccess) WorkloadAccessRequest(context.Context, ctrl.Request) (*clustersv1alpha1.AccessRequest, error) {
	return granted(), nil
}

// probingService reads from the object's control plane and workload cluster, then reports Ready.
type probingService struct{}

func (probingService) CreateOrUpdate(ctx context.Context, obj *spv1alpha1.OtelOperator, _ *spv1alpha1.ProviderConfig, cc ClusterContext) (ctrl.Result, error) {
	for _, c := range []*clusters.Cluster{cc.MCP, cc.Workload} {
		if err := c.Client().Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{}); err != nil {
			return ctrl.Result{}, err
		}
	}
	Ready(obj, "Ok", "reconciled at "+time.Now().Format(time.RFC3339Nano))
	return ctrl.Result{}, nil
}
func (probingService) Delete(context.Context, *spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig, *ClusterContext) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// TestUnreachableControlPlanesDoNotStallOthers: as many tenants as there are workers have a
// control plane that accepts connections and never answers (a listener on 127.0.0.1); another
// tenant's object, with a 5s poll interval, is still reconciled again within that interval,
// because every request to a cluster ends at RequestTimeout and frees its worker. Without the
// per-request timeout all workers wait for ReconcileTimeout (a minute here). The unreachable
// objects show the client timeout in their status.
func TestUnreachableControlPlanesDoNotStallOthers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, scheme := startProviderAPI(g)
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	c := env.Client

	mgr, platform := startManager(g, env, scheme)
	bad := &rest.Config{Host: blackHole(t), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	const workers, poll = 2, 5 * time.Second
	// Another name than the other manager tests': controller names are unique per process.
	ctl := New(Options[*spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig]{
		ProviderName: "q",
		NewObject:    func() *spv1alpha1.OtelOperator { return &spv1alpha1.OtelOperator{} },
		NewConfig:    func() *spv1alpha1.ProviderConfig { return &spv1alpha1.ProviderConfig{} },
		Onboarding:   mgr.GetClient(), Platform: c,
		ClusterAccess: realAccess{good: env.Config, bad: bad, scheme: scheme}, Reconciler: probingService{},
		Workers: workers, ReconcileTimeout: time.Minute, RequestTimeout: time.Second,
	})
	g.Expect(ctl.SetupWithManager(mgr, platform, func() client.ObjectList { return &spv1alpha1.OtelOperatorList{} })).To(Succeed())
	mgrCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { _ = mgr.Start(mgrCtx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t"}})).To(Succeed())
	g.Expect(c.Create(ctx, &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: spv1alpha1.ProviderConfigSpec{PollInterval: &metav1.Duration{Duration: poll}, Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0"}}}})).To(Succeed())
	create := func(name string) {
		g.Expect(c.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "t"},
			Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}})).To(Succeed())
	}
	ready := func(name string) func(Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			o := &spv1alpha1.OtelOperator{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "t", Name: name}, o)).To(Succeed())
			cond := meta.FindStatusCondition(o.Status.Conditions, ConditionReady)
			g.Expect(cond).NotTo(BeNil())
			return cond
		}
	}
	// The reachable tenant first, so that its first reconcile is not what is measured.
	create("fine")
	g.Eventually(ready("fine")).WithTimeout(30 * time.Second).Should(HaveField("Status", metav1.ConditionTrue))
	for i := range workers {
		create("unreachable-" + string(rune('a'+i)))
	}
	// The unreachable ones fail on the request timeout, not the reconcile timeout.
	for i := range workers {
		g.Eventually(ready("unreachable-" + string(rune('a'+i)))).WithTimeout(30 * time.Second).Should(And(
			HaveField("Reason", ReasonReconcileError), HaveField("Message", ContainSubstring("Client.Timeout exceeded"))))
	}
	// While they keep failing and retrying, the reachable tenant is reconciled again (a new
	// message) within its poll interval, twice in a row.
	for range 2 {
		before := ready("fine")(g).Message
		start := time.Now()
		g.Eventually(ready("fine")).WithTimeout(poll + 2*time.Second).WithPolling(100 * time.Millisecond).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Message", Not(Equal(before)))))
		t.Logf("reachable tenant reconciled again after %s", time.Since(start).Round(time.Millisecond))
	}
}
