package chaos

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/test/simcluster"
)

// midConverge creates the collectors of ns and returns once the operator has created the first
// of their Deployments (while most are not Ready yet), logging how far it got.
func midConverge(ctx context.Context, t *testing.T, ns string, n int) {
	t.Helper()
	createCollectors(ctx, t, ns, n, time.Now().Add(time.Minute))
	waitFor(ctx, t, "the first collector Deployment", time.Minute, func(ctx context.Context) bool {
		return managedDeployments(ctx, ns) > 0
	})
	ready, _ := readyCount(ctx, ns)
	t.Logf("fault injected with %d of %d Deployments created, %d collectors Ready", managedDeployments(ctx, ns), n, ready)
}

// TestAPIServerCrashMidConverge SIGKILLs the kube-apiserver while the operator converges the
// collectors, leaves it down for 3s and starts it again.
func TestAPIServerCrashMidConverge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sc := begin(ctx, t, "chaos-apiserver")
	midConverge(ctx, t, sc.ns, sc.n)
	if err := cluster.RestartAPIServer(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if op.p.Exited() {
		t.Fatalf("the operator exited while the API server was down:\n%s", op.p.Tail(20))
	}
	sc.check(ctx, t)
}

// TestOperatorKilledMidReconcile SIGKILLs the operator while it converges the collectors and
// starts it again, twice: when the first Deployments exist, and when half the collectors are Ready.
func TestOperatorKilledMidReconcile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sc := begin(ctx, t, "chaos-killed")
	midConverge(ctx, t, sc.ns, sc.n)
	restart := func() {
		op.kill()
		time.Sleep(time.Second)
		if err := op.start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	restart()
	// Once more when half are Ready: the rest are mid-rollout, their status writes in flight.
	ready := 0
	waitFor(ctx, t, "half of the collectors Ready", 3*time.Minute, func(ctx context.Context) bool {
		ready, _ = readyCount(ctx, sc.ns)
		return ready >= sc.n/2
	})
	t.Logf("second SIGKILL with %d of %d collectors Ready", ready, sc.n)
	restart()
	sc.check(ctx, t)
}

// TestOperatorDownWhileCreating stops the operator, then creates pods and collectors. The pod
// webhook fails open (failurePolicy Ignore): pods are admitted as they are. The collector
// webhooks fail closed (failurePolicy Fail): no collector is stored without defaulting and
// validation, so the creates are retried, as a user or a GitOps tool would, until the operator is
// back 5s later; then all converge.
func TestOperatorDownWhileCreating(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sc := begin(ctx, t, "chaos-down")
	op.stop()

	for i := range 3 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-%03d-collector-pod", i), Namespace: sc.ns,
			Annotations: map[string]string{"sidecar.opentelemetry.io/inject": "false"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}}}
		if err := k8s.Create(ctx, pod); err != nil {
			t.Fatalf("creating a pod with the operator down (the pod webhook must fail open): %v", err)
		}
		sc.users = append(sc.users, pod)
	}
	err := k8s.Create(ctx, newCollector(t, sc.ns, collectorName(0)))
	if err == nil || !isWebhookDown(err) {
		t.Fatalf("creating a collector with the operator down: got %v; want the webhook call to fail", err)
	}

	restarted := make(chan error, 1)
	go func() {
		time.Sleep(5 * time.Second)
		restarted <- op.start(ctx)
	}()
	createCollectors(ctx, t, sc.ns, sc.n, time.Now().Add(2*time.Minute))
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	cols := &v1beta1.OpenTelemetryCollectorList{}
	if err := k8s.List(ctx, cols, client.InNamespace(sc.ns)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cols.Items {
		if c.Spec.UpgradeStrategy == "" {
			t.Errorf("collector %s was stored without the defaulting webhook", c.Name)
		}
	}
	sc.check(ctx, t)
}

// TestSecondWriterFight has a second writer fight the operator for 8s each over two fields of
// owned objects: the replicas of collector c-000's Deployment, and the managed-by label of
// collector c-001's Service (which takes the Service out of the operator's label-filtered cache).
// The operator must restore its value each time without spinning: at most one write of the
// object per foreign write (plus the one-time conversion of its create's managedFields entry;
// writes refused with a conflict are counted apart), one status write per change of the workload's status (the rollout to
// 3 pods and back is reported), one Event per restore or Ready transition, nothing to other
// collectors, and nothing once the fight stops.
func TestSecondWriterFight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sc := begin(ctx, t, "chaos-fight")
	createCollectors(ctx, t, sc.ns, sc.n, time.Now().Add(time.Minute))
	waitFor(ctx, t, "the collectors Ready", 3*time.Minute, func(ctx context.Context) bool {
		ready, _ := readyCount(ctx, sc.ns)
		return ready == sc.n
	})

	fight(ctx, t, sc.ns, collectorName(0), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: collectorName(0) + "-collector", Namespace: sc.ns}},
		`{"spec":{"replicas":3}}`, func(o client.Object) bool {
			r := o.(*appsv1.Deployment).Spec.Replicas
			return r != nil && *r == 1
		})
	fight(ctx, t, sc.ns, collectorName(1), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: collectorName(1) + "-collector", Namespace: sc.ns}},
		`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"someone-else"}}}`, func(o client.Object) bool {
			return o.GetLabels()[manifestutils.LabelManagedBy] == manifestutils.ManagedBy
		})
	sc.check(ctx, t)
}

// fight merge-patches target (an object of collector col) with patch every 200ms for 8s as a
// second writer, waits until restored(live target) holds, and checks the operator's writes in
// the meantime (see TestSecondWriterFight).
func fight(ctx context.Context, t *testing.T, ns, col string, target client.Object, patch string, restored func(client.Object) bool) {
	t.Helper()
	kind := fmt.Sprintf("%T", target)
	waitQuiet(ctx, t) // what the last change set going (a rollout, its status) is over
	from := auditOffset(t)
	fights := 0
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := k8s.Patch(ctx, target.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(patch)),
			client.FieldOwner("chaos-fighter")); err != nil {
			t.Fatal(err)
		}
		fights++
	}
	waitFor(ctx, t, "the operator to restore "+target.GetName(), 30*time.Second, func(ctx context.Context) bool {
		live := target.DeepCopyObject().(client.Object)
		return k8s.Get(ctx, client.ObjectKeyFromObject(target), live) == nil && restored(live)
	})

	writes := operatorWrites(t, from)
	var own, rejected, status, events int
	for _, ev := range writes {
		if ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns {
			continue
		}
		switch {
		case ev.ObjectRef.Name == target.GetName() && ev.ResponseStatus != nil && ev.ResponseStatus.Code == http.StatusConflict:
			// A write the API server refused because the object changed under it (the applier's
			// one-time managedFields upgrade of an object it created races the workload
			// controller's status updates): it changed nothing, and is bounded below on its own.
			rejected++
		case ev.ObjectRef.Name == target.GetName():
			own++
		case ev.Resource() == "opentelemetrycollectors/status" && ev.ObjectRef.Name == col:
			status++
		case ev.Resource() == "events":
			events++
		default:
			t.Errorf("during the fight over %s the operator wrote %s %s %s", target.GetName(), ev.Verb, ev.Resource(), ev.ObjectRef.Name)
		}
	}
	// The collector's status follows its workload's: count the controller-manager's status writes
	// of the workload (a Deployment rolling to 3 pods and back) in the same window.
	workload := 0
	if err := simcluster.ReadAudit(cluster.AuditLog, from, func(ev simcluster.AuditEvent) {
		if ev.IsWrite() && ev.User.Username == "system:kube-controller-manager" && ev.ObjectRef != nil &&
			ev.Resource() == "deployments/status" && ev.ObjectRef.Namespace == ns && ev.ObjectRef.Name == col+"-collector" {
			workload++
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d foreign writes to %s %s; the operator's writes meanwhile: %d to it (and %d refused with a conflict), %d status (the workload's status changed %d times), %d Events",
		fights, kind, target.GetName(), own, rejected, status, workload, events)
	if own == 0 {
		t.Errorf("the operator never restored %s", target.GetName())
	}
	// Bounded, not spinning: one restore per foreign write, one status write per change of the
	// workload's status, one Event per restore or Ready transition (plus slack for the edges).
	// The slack covers the one-time managedFields upgrade of an object the applier created; the
	// conflicts it may meet are bounded by two rounds of its attempts.
	if own > fights+2 || rejected > 6 || status > workload+2 || events > own+status+2 {
		t.Errorf("the operator spins: %d writes to %s against %d foreign writes (%d refused), %d status writes against %d workload status changes, %d Events: %s",
			own, target.GetName(), fights, rejected, status, workload, events, describe(writes, 20))
	}
}
