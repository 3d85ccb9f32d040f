// Package shard proves --shard on the simulated cluster: two operator processes, each with its own
// identity, split the collectors of one namespace by the sharding.opentelemetry.io/key label. The
// API server's audit log shows that each shard created the objects of every one of its own
// collectors and wrote their status, and wrote nothing of the other shard's; both converge; and
// when one dies and collectors of both shards change, the other applies its own collectors'
// changes, leaves the dead one's untouched, and the dead one applies its own when it comes back.
package shard

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/controller/owned"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/fixtures"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

// namespace holds every collector of the test, both shards mixed.
const namespace = "shard"

// collectorCount is how many collectors the two shards split: 100 by default (make test), which
// proves the split in a minute or two; OTELOP_SHARD_COLLECTORS overrides it (make bench, through
// make bench-shard, runs 1,000).
func collectorCount(t *testing.T) int {
	return fixtures.Count(t, "OTELOP_SHARD_COLLECTORS", 4, 100)
}

const (
	// changedPerShard is how many collectors of each shard the test scales while shard b is down.
	changedPerShard = 3
	// applyLimit bounds how long the live shard may take to apply its collectors' changes.
	applyLimit = 2 * time.Minute
	// catchUpLimit bounds how long shard b, restarted, may take to apply its collectors' changes
	// (it waits for its old Lease to expire first).
	catchUpLimit = 3 * time.Minute
)

func TestTwoShardsSplitTheCollectors(t *testing.T) {
	n := collectorCount(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	root := testenv.RepoRoot()
	// kwok's fake nodes take 110 pods each.
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: n/100 + 2, Audit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("cluster and operator logs kept in %s", c.Keep())
		}
		_ = c.Stop()
	}()
	k8s, err := client.New(c.Config, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simcluster.InstallCRDs(ctx, c.Config, filepath.Join(root, "config", "crd", "bases"), "shard-test"); err != nil {
		t.Fatal(err)
	}
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := simcluster.InstallWebhooks(ctx, c.Config, filepath.Join(root, "config", "webhook", "manifests.yaml"),
		port, []string{"opentelemetrycollectors.opentelemetry.io"}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(c.Dir, "opentelemetry-operator")
	if err := proc.GoBuild(ctx, root, "./cmd/opentelemetry-operator", bin); err != nil {
		t.Fatal(err)
	}
	// Shard a also serves the webhooks (every collector, both shards, is admitted by it); shard b
	// runs without them and caches only its own resources.
	a := startShard(ctx, t, c, bin, "a", simcluster.OperatorWebhookFlags(port, filepath.Join(c.Dir, "certs-a"), "default")...)
	defer a.Stop(10 * time.Second)
	b := startShard(ctx, t, c, bin, "b", "--enable-webhooks=false")
	defer func() { b.Stop(10 * time.Second) }()

	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	createCollectors(ctx, t, k8s, n)
	t.Logf("%d collectors created in %s", n, time.Since(start).Round(time.Millisecond))
	waitReady(ctx, t, k8s, n, 15*time.Minute)
	t.Logf("%d collectors Ready %s after the first was created (two shards)", n, time.Since(start).Round(time.Second))

	writes := readAudit(t, c.AuditLog, 0)
	for _, s := range []string{"a", "b"} {
		own, foreign := writes.byShard(user(s), s)
		if len(foreign) > 0 {
			t.Errorf("shard %s wrote %d objects of other shards, e.g. %v", s, len(foreign), foreign[:min(5, len(foreign))])
		}
		mine := collectorsOf(s, n)
		// The status that made them Ready is written; the audit log has it within moments.
		if miss := awaitWrites(ctx, t, c.AuditLog, 0, s, mine, createdWrites, 30*time.Second); len(miss) > 0 {
			t.Errorf("shard %s: the audit log lacks its writes of the objects of its %d collectors (%d missing): %s",
				s, len(mine), len(miss), firstOf(miss, 10))
		}
		t.Logf("shard %s: %d writes to its %d collectors' objects (%.1f per collector): %v", s, own.total(), len(mine),
			float64(own.total())/float64(len(mine)), own)
	}

	// Shard b dies. Collectors of both shards change (b's first, so that a has heard of them by the
	// time it has applied its own); only shard a's changes are acted on.
	offset, err := simcluster.AuditOffset(c.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	b.Kill()
	k := min(changedPerShard, n/2)
	aChanged, bChanged := collectorsOf("a", n)[:k], collectorsOf("b", n)[:k]
	for _, name := range append(append([]string{}, bChanged...), aChanged...) {
		scale(ctx, t, k8s, name, 2)
	}
	changedAt := time.Now()
	if miss := awaitWrites(ctx, t, c.AuditLog, offset, "a", aChanged, changedWrites, applyLimit); len(miss) > 0 {
		t.Fatalf("with shard b down, shard a did not apply the change of its collectors %v within %s; the audit log lacks: %s",
			aChanged, applyLimit, firstOf(miss, 10))
	}
	for _, name := range aChanged {
		waitReplicas(ctx, t, k8s, name, 2, time.Minute)
	}
	t.Logf("with shard b down, shard a applied the change of its collectors %v (Deployments and status) %s after it was made",
		aChanged, time.Since(changedAt).Round(time.Millisecond))
	stayUnscaled(ctx, t, k8s, bChanged, 5*time.Second)
	after := readAudit(t, c.AuditLog, offset)
	if _, foreign := after.byShard(user("a"), "a"); len(foreign) > 0 {
		t.Errorf("with shard b down, shard a wrote %v", foreign)
	}

	// Shard b comes back (after its Lease expires) and applies its collectors' changes.
	offset, err = simcluster.AuditOffset(c.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	restart := time.Now()
	b = startShard(ctx, t, c, bin, "b", "--enable-webhooks=false")
	if miss := awaitWrites(ctx, t, c.AuditLog, offset, "b", bChanged, changedWrites, catchUpLimit); len(miss) > 0 {
		t.Fatalf("shard b came back but did not apply the change of its collectors %v within %s; the audit log lacks: %s",
			bChanged, catchUpLimit, firstOf(miss, 10))
	}
	t.Logf("shard b, back, applied the change of its collectors %v %s after it was started (its Lease expires first)",
		bChanged, time.Since(restart).Round(time.Millisecond))
	for _, name := range bChanged {
		waitReplicas(ctx, t, k8s, name, 2, time.Minute)
	}
	back := readAudit(t, c.AuditLog, offset)
	for _, s := range []string{"a", "b"} {
		if _, foreign := back.byShard(user(s), s); len(foreign) > 0 {
			t.Errorf("after shard b came back, shard %s wrote %v", s, foreign)
		}
	}
}

// awaitWrites polls the audit log from offset on until it shows shard s's writes want for every
// collector of collectors, and returns what is still missing (nil once all are there) when timeout
// passes.
func awaitWrites(ctx context.Context, t *testing.T, auditLog string, offset int64, s string, collectors []string, want []write, timeout time.Duration) []string {
	t.Helper()
	var miss []string
	_ = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		miss = readAudit(t, auditLog, offset).missing(user(s), collectors, want)
		return len(miss) == 0, nil
	})
	return miss
}

// stayUnscaled fails the test as soon as a Deployment of collectors leaves 1 replica during window:
// nobody may act on them while their shard is down. The window is the claim's bound: it starts
// once the live shard has applied its own collectors' changes, made after these.
func stayUnscaled(ctx context.Context, t *testing.T, k8s client.Client, collectors []string, window time.Duration) {
	t.Helper()
	for end := time.Now().Add(window); ; {
		for _, name := range collectors {
			if got := deploymentReplicas(ctx, t, k8s, name); got != 1 {
				t.Fatalf("with shard b down, %s's Deployment has %d replicas; want 1 (nobody may act on it)", name, got)
			}
		}
		if time.Now().After(end) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// startShard runs the operator binary as shard s with its own client certificate (user
// otelop-shard-<s>), leader election with short leases, and waits for /readyz.
func startShard(ctx context.Context, t *testing.T, c *simcluster.Cluster, bin, s string, extra ...string) *proc.Process {
	t.Helper()
	kubeconfig, _, _, err := c.IssueClient("shard-"+s, user(s), []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := proc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig=" + kubeconfig, "--shard=" + s, "--metrics-addr=0",
		"--health-probe-addr=" + probe, "--webhook-cert-namespace=default",
		"--enable-leader-election", "--leader-election-lease-duration=15s",
		"--leader-election-renew-deadline=10s", "--leader-election-retry-period=2s"}, extra...)
	p, err := proc.Start("operator-"+s, bin, args, filepath.Join(c.Dir, "logs", "operator-"+s+"-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitHTTP(ctx, "http://"+probe+"/readyz", 200*time.Millisecond, 2*time.Minute); err != nil {
		p.Stop(5 * time.Second)
		t.Fatal(err)
	}
	return p
}

func user(s string) string { return "otelop-shard-" + s }

func collectorName(s string, i int) string { return fmt.Sprintf("%s-%04d", s, i) }

// collectorsOf is the names of shard s's collectors among the n createCollectors makes (a gets
// the even indexes, b the odd ones).
func collectorsOf(s string, n int) []string {
	count := n / 2
	if s == "a" {
		count = (n + 1) / 2
	}
	names := make([]string, count)
	for i := range names {
		names[i] = collectorName(s, i)
	}
	return names
}

// createCollectors creates n small deployment-mode collectors, alternately in shards a and b, 16
// at a time.
func createCollectors(ctx context.Context, t *testing.T, k8s client.Client, n int) {
	t.Helper()
	cfg := fixtures.CollectorConfig(t)
	fixtures.ForEach(t, n, 16, func(i int) error {
		s := "ab"[i%2 : i%2+1]
		col := &v1beta1.OpenTelemetryCollector{
			ObjectMeta: metav1.ObjectMeta{Name: collectorName(s, i/2), Namespace: namespace,
				Labels: map[string]string{owned.ShardLabel: s}},
			Spec: v1beta1.OpenTelemetryCollectorSpec{Mode: v1beta1.ModeDeployment, Config: *cfg.DeepCopy()},
		}
		if err := k8s.Create(ctx, col); err != nil {
			return fmt.Errorf("%s: %w", col.Name, err)
		}
		return nil
	})
}

// waitReady waits until n collectors of the namespace report Ready=True.
func waitReady(ctx context.Context, t *testing.T, k8s client.Client, n int, timeout time.Duration) {
	t.Helper()
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := fixtures.ReadyCollectors(ctx, k8s, namespace)
		if err != nil {
			return false, nil
		}
		ready = got
		return ready == n, nil
	})
	if err != nil {
		t.Fatalf("%d of %d collectors Ready: %v", ready, n, err)
	}
}

func scale(ctx context.Context, t *testing.T, k8s client.Client, name string, replicas int32) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := k8s.Patch(ctx, col, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func deploymentReplicas(ctx context.Context, t *testing.T, k8s client.Client, collector string) int32 {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: collector + "-collector"}, dep); err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Replicas == nil {
		return 1
	}
	return *dep.Spec.Replicas
}

func waitReplicas(ctx context.Context, t *testing.T, k8s client.Client, collector string, want int32, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		return deploymentReplicas(ctx, t, k8s, collector) == want, nil
	})
	if err != nil {
		t.Fatalf("%s's Deployment did not reach %d replicas: %v", collector, want, err)
	}
}
