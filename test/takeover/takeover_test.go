package takeover

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"

	"github.com/otelop/otelop/test/upstreamop"
)

const (
	ns             = "takeover"
	twinsNamespace = ns + "-twins"
	collectorCRD   = "opentelemetrycollectors.opentelemetry.io"
	upstreamUser   = "upstream-operator"
	otelopUser     = "otelop-operator"
	upstreamPkg    = "github.com/open-telemetry/opentelemetry-operator"
	convergeLimit  = 4 * time.Minute
	settleLimit    = 3 * time.Minute
)

func TestMain(m *testing.M) {
	upstreamop.RunChildIfAsked()
	os.Exit(m.Run())
}

// env is the cluster and what the phases share.
type env struct {
	t          *testing.T
	ctx        context.Context
	root       string
	cluster    *simcluster.Cluster
	admin      client.Client
	upBin      string
	upModule   string
	upDir      string
	upKube     string
	ourCfg     *rest.Config
	hookPort   int
	ca         []byte
	auditPos   int64
	phaseStart time.Time
}

// TestTakeover runs upstream's operator, then ours, then upstream's again on the same collectors
// and checks that neither switch restarts a pod or changes a pod template.
func TestTakeover(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("the takeover test runs upstream's operator in a network namespace of its own and needs unshare (util-linux)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := &env{t: t, ctx: ctx, root: testenv.RepoRoot()}
	e.upBin = filepath.Join(e.root, "bin", "tools", "upstream-operator")
	if _, err := os.Stat(e.upBin); err != nil {
		t.Fatalf("%v: build upstream's operator with hack/build-tools.sh upstream-operator (make test does)", err)
	}
	e.upModule = upstreamModuleDir(t, e.root)
	var err error
	e.cluster, err = simcluster.Start(ctx, simcluster.Options{Nodes: 2, Audit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Log(e.cluster.LogTails(10))
			t.Log("the simulated cluster's files are kept in", e.cluster.Keep())
		}
		_ = e.cluster.Stop()
	}()
	if e.admin, err = client.New(e.cluster.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		t.Fatal(err)
	}
	e.upDir = filepath.Join(e.cluster.Dir, "upstream")
	if err := os.MkdirAll(e.upDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if e.ca, err = writeServingCert(e.upDir); err != nil {
		t.Fatal(err)
	}
	if e.upKube, _, _, err = e.cluster.IssueClient("upstream-operator", upstreamUser, []string{"system:masters"}); err != nil {
		t.Fatal(err)
	}
	ourKube, _, _, err := e.cluster.IssueClient("otelop-operator", otelopUser, []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	if e.ourCfg, err = clientcmd.BuildConfigFromFlags("", ourKube); err != nil {
		t.Fatal(err)
	}
	if e.hookPort, err = proc.FreePort(); err != nil {
		t.Fatal(err)
	}

	if err := upstreamIdentity(ctx, e.admin); err != nil {
		t.Fatal(err)
	}
	// 1. Upstream's install: its CRDs and webhooks, its operator, the collectors.
	up := e.startUpstream("upstream-1.log")
	e.createCollectors()
	e.waitConverged(upstreamUser, up)
	e.settle(upstreamUser, up)
	base := e.snapshot()
	e.checkNoneOurs(base)
	if err := up.Stop(); err != nil {
		t.Logf("stopping upstream's operator: %v", err)
	}

	// 2. The switch: our CRDs and webhooks, our operator.
	e.installOurs()
	stopOurs := e.startOurs()
	e.settle(otelopUser, nil)
	writes := e.writesSincePhase(otelopUser)
	ours := e.snapshot()
	e.checkTwins(base)
	e.checkAdopted(base)
	stopOurs()
	e.report("upstream -> otelop", base, ours, writes)

	// 3. The way back: upstream's CRDs and webhooks, its operator.
	up = e.startUpstream("upstream-2.log")
	e.settle(upstreamUser, up)
	writes = e.writesSincePhase(upstreamUser)
	back := e.snapshot()
	if err := up.Stop(); err != nil {
		t.Logf("stopping upstream's operator: %v", err)
	}
	e.report("otelop -> upstream", ours, back, writes)
}

func upstreamModuleDir(t *testing.T, root string) string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", upstreamPkg)
	cmd.Dir = filepath.Join(root, "hack", "tools", "upstream-operator")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("locating upstream's module (for its CRDs and webhook manifests): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// startUpstream installs upstream's CRDs and webhook configurations (pointed at its forwarded
// webhook port, with the CA of its serving certificate) and starts its operator.
func (e *env) startUpstream(log string) *upstreamop.Operator {
	e.t.Helper()
	if _, err := simcluster.InstallCRDs(e.ctx, e.cluster.Config, filepath.Join(e.upModule, "config", "crd", "bases"), "install"); err != nil {
		e.t.Fatal(err)
	}
	if err := simcluster.InstallWebhooks(e.ctx, e.cluster.Config, filepath.Join(e.upModule, "config", "webhook", "manifests.yaml"),
		e.hookPort, []string{collectorCRD}); err != nil {
		e.t.Fatal(err)
	}
	if err := injectCA(e.ctx, e.admin, e.ca); err != nil {
		e.t.Fatal(err)
	}
	e.markPhase()
	up, err := startUpstream(e.upBin, e.upKube, e.cluster.Config.Host, e.upDir, e.hookPort, filepath.Join(e.cluster.Dir, "logs", log))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = up.Stop() })
	return up
}

// installOurs replaces the CRDs and webhook configurations with ours, as installing this
// project's chart or config/default over upstream's does.
func (e *env) installOurs() {
	e.t.Helper()
	if _, err := simcluster.InstallCRDs(e.ctx, e.cluster.Config, filepath.Join(e.root, "config", "crd", "bases"), "install"); err != nil {
		e.t.Fatal(err)
	}
	if err := simcluster.InstallWebhooks(e.ctx, e.cluster.Config, filepath.Join(e.root, "config", "webhook", "manifests.yaml"),
		e.hookPort, []string{collectorCRD}); err != nil {
		e.t.Fatal(err)
	}
}

// startOurs runs our operator in this process with its own identity and self-managed webhook
// certificate, and returns the function that stops it.
func (e *env) startOurs() func() {
	e.t.Helper()
	o := operator.DefaultOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.WebhookHost, o.WebhookPort = "127.0.0.1", e.hookPort
	o.Certs.Namespace = "default"
	o.Certs.CertDir = filepath.Join(e.cluster.Dir, "otelop-webhook-certs")
	o.Certs.ExtraIPs = []net.IP{net.ParseIP("127.0.0.1")}
	e.markPhase()
	ctx, cancel := context.WithCancel(e.ctx)
	mgr, err := operator.New(ctx, e.ourCfg, o)
	if err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				e.t.Logf("our operator: %v", err)
			}
		case <-time.After(20 * time.Second):
			e.t.Log("our operator did not stop within 20s")
		}
	}
}

// createCollectors creates the namespace and testdata/collectors.yaml in it, retrying while
// upstream's webhooks are not served yet.
func (e *env) createCollectors() {
	e.t.Helper()
	if err := e.admin.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		e.t.Fatal(err)
	}
	objs, err := simcluster.ReadManifestFile(filepath.Join("testdata", "collectors.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range objs {
		o.SetNamespace(ns)
		deadline := time.Now().Add(90 * time.Second)
		for {
			err := e.admin.Create(e.ctx, o.DeepCopy())
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			time.Sleep(time.Second)
		}
	}
}

// waitConverged waits until every workload upstream generates exists with all pods ready and the
// application's pod has the sidecar injected.
func (e *env) waitConverged(user string, up *upstreamop.Operator) {
	e.t.Helper()
	want := []struct{ kind, name string }{
		{"Deployment", "gateway-collector"}, {"Deployment", "legacy-collector"},
		{"DaemonSet", "agent-collector"}, {"StatefulSet", "scraper-collector"},
		{"Deployment", "scraper-targetallocator"}, {"Deployment", "app"},
	}
	deadline := time.Now().Add(convergeLimit)
	for {
		var missing []string
		for _, w := range want {
			if !e.workloadReady(w.kind, w.name) {
				missing = append(missing, w.kind+"/"+w.name)
			}
		}
		if len(missing) == 0 && e.sidecarInjected() {
			return
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("%s's collectors did not converge in %s: not ready %v, sidecar injected %v", user, convergeLimit, missing, e.sidecarInjected())
			if up != nil {
				msg += "\nupstream's log:\n" + up.Tail(40)
			}
			e.t.Fatal(msg)
		}
		time.Sleep(time.Second)
	}
}

func (e *env) workloadReady(kind, name string) bool {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind(kind)
	if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return false
	}
	ready := func(f ...string) int64 {
		v, _, _ := unstructured.NestedInt64(u.Object, append([]string{"status"}, f...)...)
		return v
	}
	if kind == "DaemonSet" {
		want := ready("desiredNumberScheduled")
		return want > 0 && ready("numberReady") == want
	}
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	return ready("readyReplicas") == want && ready("updatedReplicas") == want
}

func (e *env) sidecarInjected() bool {
	pods := &corev1.PodList{}
	if err := e.admin.List(e.ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "app"}); err != nil || len(pods.Items) == 0 {
		return false
	}
	for _, c := range append(pods.Items[0].Spec.InitContainers, pods.Items[0].Spec.Containers...) {
		if c.Name == "otc-container" {
			return true
		}
	}
	return false
}

// markPhase starts counting an operator's writes from now.
func (e *env) markPhase() {
	e.auditPos = fileSize(e.cluster.AuditLog)
	e.phaseStart = time.Now()
}

// settle waits until user has run at least 15s and then written nothing for 10s, and fails the
// test when that has not happened within settleLimit.
func (e *env) settle(user string, up *upstreamop.Operator) {
	e.t.Helper()
	if up != nil && user == upstreamUser {
		e.waitConverged(user, up)
	}
	pos := e.auditPos
	quietSince := time.Now()
	deadline := time.Now().Add(settleLimit)
	var last map[string]int
	for {
		w, next, err := auditWrites(e.cluster.AuditLog, user, pos)
		if err != nil {
			e.t.Fatal(err)
		}
		pos = next
		if len(w) > 0 {
			quietSince, last = time.Now(), w
		}
		if time.Since(e.phaseStart) > 15*time.Second && time.Since(quietSince) > 10*time.Second {
			return
		}
		if time.Now().After(deadline) {
			all := e.writesSincePhase(user)
			e.t.Fatalf("%s did not settle within %s: %d writes since the phase started %s ago, the last %s ago "+
				"(a settled operator writes nothing for 10s); the last writes seen, by kind and verb: %v", user, settleLimit,
				total(all), time.Since(e.phaseStart).Round(time.Second), time.Since(quietSince).Round(time.Second), byKindAndVerb(last))
		}
		time.Sleep(time.Second)
	}
}

func (e *env) writesSincePhase(user string) map[string]int {
	e.t.Helper()
	w, _, err := auditWrites(e.cluster.AuditLog, user, e.auditPos)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func (e *env) snapshot() snapshot {
	e.t.Helper()
	s, err := takeSnapshot(e.ctx, e.admin, ns)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// report logs the writes and changes of one switch and fails on a restarted pod, a changed pod
// template or a new ReplicaSet or ControllerRevision (a rollout).
func (e *env) report(name string, before, after snapshot, writes map[string]int) {
	t := e.t
	t.Logf("== %s: %d writes to the API server by kind and verb:", name, total(writes))
	for _, k := range sortedKeys(byKindAndVerb(writes)) {
		t.Logf("   %-45s %d", k, byKindAndVerb(writes)[k])
	}
	t.Logf("   per object:")
	for _, k := range sortedKeys(writes) {
		t.Logf("     %-60s %d", k, writes[k])
	}
	changes := diff(before, after)
	t.Logf("== %s: %d changed fields (status left out):", name, len(changes))
	for _, c := range changes {
		if strings.HasPrefix(c.Object, "Pod/") && strings.HasPrefix(c.Path, ".status") ||
			strings.HasPrefix(c.Object, "ReplicaSet/") && c.Path != "(object)" {
			continue
		}
		t.Logf("   %s", c)
	}
	bu, au := before.podUIDs(), after.podUIDs()
	restarted, known := 0, 0
	for pod, uid := range bu {
		if au[pod] == uid {
			continue
		}
		restarted++
		if why := knownRestart(pod); why != "" {
			known++
			t.Logf("%s: KNOWN: pod %s was replaced: %s", name, pod, why)
			continue
		}
		t.Errorf("%s: pod %s was replaced or removed", name, pod)
	}
	for pod := range au {
		if _, ok := bu[pod]; !ok && knownRestart(pod) == "" {
			t.Errorf("%s: new pod %s", name, pod)
		}
	}
	t.Logf("== %s: %d of %d pods restarted (%d of them known differences)", name, restarted, len(bu), known)
	for _, c := range changes {
		kind, obj, _ := strings.Cut(c.Object, "/")
		rollout := (kind == "Deployment" || kind == "DaemonSet" || kind == "StatefulSet") && strings.HasPrefix(c.Path, ".spec.template") ||
			(kind == "ReplicaSet" || kind == "ControllerRevision") && c.Path == "(object)"
		if !rollout {
			continue
		}
		if why := knownRestart("Pod/" + obj); why != "" {
			t.Logf("%s: KNOWN: rollout: %s: %s", name, c, why)
			continue
		}
		t.Errorf("%s: rollout: %s", name, c)
	}
}

// knownRestarts are the rollouts a switch still causes, by name prefix of the pods (and of their
// workload), each with its reason: a deliberate difference, documented in docs/migrating.md.
var knownRestarts = map[string]string{
	"scraper-targetallocator": "by design: without spec.image the target allocator runs this project's allocator image " +
		"instead of upstream's (docs/migrating.md); pinning --target-allocator-image to upstream's image avoids it",
}

func knownRestart(obj string) string {
	_, name, _ := strings.Cut(obj, "/")
	for prefix, why := range knownRestarts {
		if strings.HasPrefix(name, prefix) {
			return why
		}
	}
	return ""
}

// checkTwins creates the same collectors in a second namespace while our operator runs, so that
// our webhooks default (and, for v1alpha1, convert) them and our operator renders them, and checks
// that they come out as upstream's did in the first namespace: the same stored spec.config, the
// same ConfigMap hash and the same collector.yaml text.
func (e *env) checkTwins(upstreamSnap snapshot) {
	t := e.t
	t.Helper()
	const twins = twinsNamespace
	if err := e.admin.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twins}}); err != nil {
		t.Fatal(err)
	}
	objs, err := simcluster.ReadManifestFile(filepath.Join("testdata", "collectors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		if o.GetKind() != "OpenTelemetryCollector" {
			continue
		}
		o.SetNamespace(twins)
		names = append(names, o.GetName())
		deadline := time.Now().Add(60 * time.Second)
		for {
			err := e.admin.Create(e.ctx, o.DeepCopy())
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("creating twin %s: %v", o.GetName(), err)
			}
			time.Sleep(time.Second)
		}
	}
	for _, name := range names {
		up := upstreamSnap["OpenTelemetryCollector/"+name]
		twin := &unstructured.Unstructured{}
		twin.SetAPIVersion("opentelemetry.io/v1beta1")
		twin.SetKind("OpenTelemetryCollector")
		if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: twins, Name: name}, twin); err != nil {
			t.Fatal(err)
		}
		var changes []change
		diffValue(name, ".spec.config", up["spec"].(map[string]any)["config"], twin.Object["spec"].(map[string]any)["config"], &changes)
		for _, c := range changes {
			t.Errorf("defaulting differs from upstream's: %s", c)
		}
		var cmName string
		for k := range upstreamSnap {
			if strings.HasPrefix(k, "ConfigMap/"+name+"-collector-") {
				cmName = strings.TrimPrefix(k, "ConfigMap/")
			}
		}
		if cmName == "" {
			t.Errorf("upstream generated no ConfigMap for %s", name)
			continue
		}
		want, _, _ := unstructured.NestedString(upstreamSnap["ConfigMap/"+cmName], "data", "collector.yaml")
		cm := &corev1.ConfigMap{}
		deadline := time.Now().Add(60 * time.Second)
		for e.admin.Get(e.ctx, client.ObjectKey{Namespace: twins, Name: cmName}, cm) != nil {
			if time.Now().After(deadline) {
				t.Errorf("%s: no ConfigMap %s (upstream's name, same hash) in %s", name, cmName, twins)
				break
			}
			time.Sleep(time.Second)
		}
		if got := cm.Data["collector.yaml"]; cm.Name != "" && got != want {
			t.Errorf("%s: collector.yaml differs from upstream's\n--- upstream\n%s\n--- ours\n%s", name, want, got)
		}
	}
	t.Logf("== twins: %d collectors created through our webhooks render as upstream's (spec.config, ConfigMap name and text)", len(names))
}
