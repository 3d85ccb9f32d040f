package bridge

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/opampbridge/collectors"
)

// memRecord is the bridge's creation record kept in memory (identity.Store keeps it in a
// ConfigMap; what matters here is the collectors the API server holds).
type memRecord struct {
	mu sync.Mutex
	m  map[string]string
}

func (r *memRecord) Created(context.Context) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for k, v := range r.m {
		out[k] = v
	}
	return out, nil
}

func (r *memRecord) SetCreated(_ context.Context, m map[string]string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = m
	return nil
}

// startCollectors runs the bridge's collectors client (as bridge.Run builds it) against the test
// API server, for the bridge "b" running in bridgeNS.
func startCollectors(t *testing.T, rc *rest.Config, bridgeNS string, namespaces ...string) *collectors.Client {
	t.Helper()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := collectors.New(rc, s, collectors.Options{BridgeName: "b", BridgeNamespace: bridgeNS, Namespaces: namespaces, Record: &memRecord{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	syncCtx, cancelSync := context.WithTimeout(ctx, wait)
	defer cancelSync()
	if err := c.Start(ctx, syncCtx); err != nil {
		t.Fatal(err)
	}
	return c
}

func getCollector(t *testing.T, ns, name string) *v1beta1.OpenTelemetryCollector {
	t.Helper()
	var c v1beta1.OpenTelemetryCollector
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// withSpec inserts extra spec lines (two-space indented YAML) into a collector body.
func withSpec(body []byte, lines string) []byte {
	return []byte(strings.Replace(string(body), "spec:\n", "spec:\n"+lines, 1))
}

// TestServerMaySetConfigOnly is the attack of issue 31, finding 1: a hostile OpAMP server pushes
// a collector the bridge manages with an attacker's image, a privileged ServiceAccount, the
// namespace's Secrets as environment, host volumes, host namespaces, a privileged security
// context, extra containers, or labels and annotations that reach the pods and Services. Each
// is refused with the field path named, and the collector is not changed. The control: a new
// configuration (spec.config) applies, also when the server echoes the reported collector back.
func TestServerMaySetConfigOnly(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "allow")
	managed := map[string]string{collectors.ManagedLabel: "b"}
	createCollector(t, collectorYAML("allow", "col", managed))
	c := startCollectors(t, env.Config, "allow")

	attacks := []struct{ path, spec string }{
		{"spec.image", "  image: attacker/collector:latest\n"},
		{"spec.serviceAccount", "  serviceAccount: cluster-admin-sa\n"},
		{"spec.envFrom", "  envFrom: [{secretRef: {name: db}}]\n"},
		{"spec.env[0].valueFrom", "  env: [{name: PW, valueFrom: {secretKeyRef: {name: db, key: pw}}}]\n"},
		{"spec.volumes", "  volumes: [{name: root, hostPath: {path: /}}]\n"},
		{"spec.volumeMounts", "  volumeMounts: [{name: root, mountPath: /host}]\n"},
		{"spec.hostNetwork", "  hostNetwork: true\n"},
		{"spec.hostPID", "  hostPID: true\n"},
		{"spec.securityContext", "  securityContext: {privileged: true}\n"},
		{"spec.podSecurityContext", "  podSecurityContext: {runAsUser: 0}\n"},
		{"spec.initContainers", "  initContainers: [{name: x, image: attacker/x}]\n"},
		{"spec.additionalContainers", "  additionalContainers: [{name: x, image: attacker/x}]\n"},
	}
	before := getCollector(t, "allow", "col").ResourceVersion
	for _, a := range attacks {
		body := withSpec(collectorYAML("allow", "col", managed, "otlp", "otlp/2"), a.spec)
		err := c.ApplyAll(ctx, map[string][]byte{"allow/col": body})
		g.Expect(err).To(MatchError(ContainSubstring(a.path)), a.path)
	}
	for _, meta := range []map[string]string{
		{collectors.ManagedLabel: "b", "app": "payments"},
	} {
		err := c.ApplyAll(ctx, map[string][]byte{"allow/col": collectorYAML("allow", "col", meta, "otlp", "otlp/2")})
		g.Expect(err).To(MatchError(ContainSubstring("metadata.labels[app]")))
	}
	annotated := []byte(strings.Replace(string(collectorYAML("allow", "col", managed, "otlp", "otlp/2")), "metadata:\n",
		"metadata:\n  annotations: {service.beta.kubernetes.io/aws-load-balancer-internal: \"false\"}\n", 1))
	g.Expect(c.ApplyAll(ctx, map[string][]byte{"allow/col": annotated})).To(MatchError(ContainSubstring("metadata.annotations[service.beta.kubernetes.io/aws-load-balancer-internal]")))
	g.Expect(getCollector(t, "allow", "col").ResourceVersion).To(Equal(before), "nothing changed")

	// Control: spec.config may change, also in the whole object the bridge reported.
	g.Expect(c.ApplyAll(ctx, map[string][]byte{"allow/col": collectorYAML("allow", "col", managed, "otlp", "otlp/2")})).To(Succeed())
	col := getCollector(t, "allow", "col")
	g.Expect(col.Spec.Config.Receivers.Object).To(HaveKey("otlp/2"))
	echo, err := collectors.Render(col)
	g.Expect(err).NotTo(HaveOccurred())
	echo = []byte(strings.Replace(string(echo), "otlp/2:", "otlp/3:", 1))
	echo = []byte(strings.ReplaceAll(string(echo), "- otlp/2", "- otlp/3"))
	g.Expect(c.ApplyAll(ctx, map[string][]byte{"allow/col": echo})).To(Succeed(), "the reported collector, echoed back with a new config")
	g.Expect(getCollector(t, "allow", "col").Spec.Config.Receivers.Object).To(HaveKey("otlp/3"))
}

// TestServerCreatesConfigOnly: a new collector may carry spec.config only (and fields at the API
// server's defaults); one with an image is refused and not created. It is created, not applied;
// its fields then become the bridge's applied fields.
func TestServerCreatesConfigOnly(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "allow-new")
	managed := map[string]string{collectors.ManagedLabel: "b"}
	c := startCollectors(t, env.Config, "allow-new")
	bad := withSpec(collectorYAML("allow-new", "evil", managed), "  image: attacker/collector:latest\n")
	g.Expect(c.ApplyAll(ctx, map[string][]byte{"allow-new/evil": bad})).To(MatchError(ContainSubstring("spec.image")))
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: "allow-new", Name: "evil"}, &v1beta1.OpenTelemetryCollector{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "not created")

	g.Expect(c.ApplyAll(ctx, map[string][]byte{"allow-new/good": collectorYAML("allow-new", "good", managed)})).To(Succeed())
	// A receiver the next configuration drops is removed: the create's fields became the
	// bridge's applied fields.
	g.Expect(c.ApplyAll(ctx, map[string][]byte{"allow-new/good": collectorYAML("allow-new", "good", managed, "otlp/2")})).To(Succeed())
	g.Expect(getCollector(t, "allow-new", "good").Spec.Config.Receivers.Object).To(And(HaveKey("otlp/2"), Not(HaveKey("otlp"))))
}

// raceTransport creates a user's collector right after the bridge's first dry-run request in
// namespace ns: between the bridge's read (not found) and its write.
type raceTransport struct {
	next http.RoundTripper
	ns   string
	once sync.Once
	t    *testing.T
}

func (r *raceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if req.URL.Query().Get("dryRun") != "" && strings.Contains(req.URL.Path, "/namespaces/"+r.ns+"/opentelemetrycollectors") {
		r.once.Do(func() {
			user := collectorYAML(r.ns, "race", map[string]string{"owner": "user"}, "jaeger")
			if err := env.Client.Create(context.Background(), collectorObject(r.t, user)); err != nil {
				r.t.Errorf("creating the user's collector: %v", err)
			}
		})
	}
	return resp, err
}

// TestNewCollectorIsNotAdopted: a user creates a collector of the same name between the bridge's
// check and its write; the bridge fails instead of taking the user's collector over.
func TestNewCollectorIsNotAdopted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "race")
	rc := rest.CopyConfig(env.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &raceTransport{next: rt, ns: "race", t: t} })
	c := startCollectors(t, rc, "race")
	err := c.ApplyAll(ctx, map[string][]byte{"race/race": collectorYAML("race", "race", map[string]string{collectors.ManagedLabel: "b"})})
	g.Expect(err).To(HaveOccurred())
	col := getCollector(t, "race", "race")
	g.Expect(col.Labels).To(Equal(map[string]string{"owner": "user"}), "the user's collector is untouched")
	g.Expect(col.Spec.Config.Receivers.Object).To(HaveKey("jaeger"))
}

// TestManagedTrueIsNotEveryBridge: a collector labelled opamp-managed=true belongs only to the
// bridges of its own namespace; other namespaces are outside a bridge's default scope; a
// collector naming the bridge in a namespace the bridge lists is its to change.
func TestManagedTrueIsNotEveryBridge(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "home")
	createNamespace(t, "elsewhere")
	createCollector(t, collectorYAML("elsewhere", "any", map[string]string{collectors.ManagedLabel: "true"}))
	createCollector(t, collectorYAML("elsewhere", "named", map[string]string{collectors.ManagedLabel: "b"}))
	createCollector(t, collectorYAML("home", "local", map[string]string{collectors.ManagedLabel: "true"}))

	def := startCollectors(t, env.Config, "home")
	push := func(c *collectors.Client, ns, name string, labels map[string]string) error {
		return c.ApplyAll(ctx, map[string][]byte{ns + "/" + name: collectorYAML(ns, name, labels, "otlp", "otlp/2")})
	}
	g.Expect(push(def, "elsewhere", "named", map[string]string{collectors.ManagedLabel: "b"})).To(MatchError(ContainSubstring("outside")), "default scope: the bridge's namespace")
	g.Expect(push(def, "home", "local", map[string]string{collectors.ManagedLabel: "true"})).To(Succeed(), "true in the bridge's own namespace")

	listed := startCollectors(t, env.Config, "home", "home", "elsewhere")
	g.Expect(push(listed, "elsewhere", "any", map[string]string{collectors.ManagedLabel: "true"})).To(MatchError(ContainSubstring(collectors.ManagedLabel)))
	g.Expect(getCollector(t, "elsewhere", "any").Spec.Config.Receivers.Object).NotTo(HaveKey("otlp/2"))
	g.Expect(push(listed, "elsewhere", "named", map[string]string{collectors.ManagedLabel: "b"})).To(Succeed(), "named for the bridge, in its namespaces")
}

// TestRestartsAreRateLimited: restart commands in a loop roll the workloads once per interval.
func TestRestartsAreRateLimited(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "restarts")
	createCollector(t, collectorYAML("restarts", "r", map[string]string{collectors.ManagedLabel: "b"}))
	g.Expect(env.Client.Create(ctx, deployment("restarts", "r-collector"))).To(Succeed())
	c := startCollectors(t, env.Config, "restarts")
	g.Eventually(func() (n int) {
		l, _ := c.List(ctx)
		for _, col := range l {
			if col.Namespace == "restarts" {
				n++
			}
		}
		return n
	}, wait).Should(Equal(1))
	rv := func() string {
		var d appsv1.Deployment
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "restarts", Name: "r-collector"}, &d)).To(Succeed())
		return d.ResourceVersion
	}
	now := time.Now()
	keys, err := c.Restart(ctx, now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys).To(HaveLen(1))
	first := rv()
	for i := 1; i <= 10; i++ {
		keys, err := c.Restart(ctx, now.Add(time.Duration(i)*time.Second))
		g.Expect(err).To(HaveOccurred(), fmt.Sprintf("restart %d", i))
		g.Expect(keys).To(BeEmpty())
	}
	g.Expect(rv()).To(Equal(first), "rolled once")
	keys, err = c.Restart(ctx, now.Add(collectors.DefaultMinRestartInterval))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys).To(HaveLen(1))
}

// TestRefusalIsReportedToTheServer: the server learns what was refused and why, as a FAILED
// remote configuration status naming the field path; the control, the same collector with
// config only, is APPLIED.
func TestRefusalIsReportedToTheServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "told")
	srv := startServer(t)
	startBridge(t, testConfig(t, srv, "told-bridge", "told"), Options{})
	uid := connected(g, srv)
	managed := map[string]string{collectors.ManagedLabel: "told-bridge"}
	bad := withSpec(collectorYAML("told", "c", managed), "  hostNetwork: true\n  serviceAccount: admin\n")
	hash, err := srv.PushConfig(ctx, uid, files("told/c", bad))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(srv.Wait(wait, "a status", statusFor(srv, hash))).To(Succeed())
	st := srv.Agent(uid).RemoteConfigStatus
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED))
	g.Expect(st.ErrorMessage).To(And(ContainSubstring("told/c"), ContainSubstring("spec.hostNetwork"), ContainSubstring("spec.serviceAccount")))
	g.Expect(exists("told", "c")).To(BeFalse())

	hash, err = srv.PushConfig(ctx, uid, files("told/c", collectorYAML("told", "c", managed)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(srv.Wait(wait, "a status", statusFor(srv, hash))).To(Succeed())
	st = srv.Agent(uid).RemoteConfigStatus
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)
}
