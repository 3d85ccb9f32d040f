package promcr

import (
	"context"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	promconfig "github.com/prometheus/prometheus/config"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

// TestMain starts an API server with the Prometheus Operator CRDs of testdata/crds (generated
// with controller-gen from the API types module in go.mod; see testdata/crds/generate.sh).
func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, monv1.AddToScheme, monv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	testenv.Main(m, testenv.Options{Scheme: scheme, CRDDirectoryPaths: []string{filepath.Join("testdata", "crds")}},
		func(e *testenv.Env) { env = e })
}

// latest keeps the last scrape configurations the watcher reported.
type latest struct {
	mu  sync.Mutex
	scs []*promconfig.ScrapeConfig
	n   int
}

func (l *latest) set(scs []*promconfig.ScrapeConfig) {
	l.mu.Lock()
	l.scs, l.n = scs, l.n+1
	l.mu.Unlock()
}

func (l *latest) jobs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.scs))
	for _, sc := range l.scs {
		out = append(out, sc.JobName)
	}
	sort.Strings(out)
	return out
}

func (l *latest) password(job string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sc := range l.scs {
		if sc.JobName == job && sc.HTTPClientConfig.BasicAuth != nil {
			return string(sc.HTTPClientConfig.BasicAuth.Password)
		}
	}
	return ""
}

func smon(ns, name string, lbls map[string]string, basicAuth bool) *monv1.ServiceMonitor {
	sm := &monv1.ServiceMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Spec: monv1.ServiceMonitorSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Endpoints: []monv1.Endpoint{{Port: "metrics"}}}}
	if basicAuth {
		sm.Spec.Endpoints[0].BasicAuth = &monv1.BasicAuth{Username: sel("creds", "user"), Password: sel("creds", "pass")}
	}
	return sm
}

// TestWatcherSelectsResolvesAndFollows runs the watcher against a real API server with the
// Prometheus Operator CRDs: label and namespace selectors (namespace labels, a null namespace
// selector meaning the collectors' namespace, a null selector meaning none), a Secret-backed
// basic auth, then namespace relabelling, a secret rotation, an update and a delete.
func TestWatcherSelectsResolvesAndFollows(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := env.Client
	for ns, lbls := range map[string]map[string]string{"obs": nil, "team-a": {"monitored": "yes"}, "team-b": {"monitored": "no"}} {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: lbls}})).To(Succeed())
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "creds"},
		StringData: map[string]string{"user": "scraper", "pass": "first"}}
	scrape := map[string]string{"scrape": "yes"}
	for _, o := range []client.Object{
		secret,
		smon("team-a", "api", scrape, true),
		smon("team-a", "unlabelled", nil, false),
		smon("team-b", "api", scrape, false),
		&monv1.PodMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: "obs", Name: "pm"}, Spec: monv1.PodMonitorSpec{
			PodMetricsEndpoints: []monv1.PodMetricsEndpoint{{Port: ptr.To("metrics")}}}},
		&monv1.PodMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pm"}, Spec: monv1.PodMonitorSpec{
			PodMetricsEndpoints: []monv1.PodMetricsEndpoint{{Port: ptr.To("metrics")}}}},
		&monv1.Probe{ObjectMeta: metav1.ObjectMeta{Namespace: "obs", Name: "probe"}, Spec: monv1.ProbeSpec{
			ProberSpec: monv1.ProberSpec{URL: "blackbox:9115"},
			Targets:    monv1.ProbeTargets{StaticConfig: &monv1.ProbeTargetStaticConfig{Targets: []string{"example.test"}}}}},
		&monv1alpha1.ScrapeConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "sc"}, Spec: monv1alpha1.ScrapeConfigSpec{
			StaticConfigs: []monv1alpha1.StaticConfig{{Targets: []monv1alpha1.Target{"127.0.0.1:9100"}}}}},
	} {
		g.Expect(c.Create(ctx, o)).To(Succeed(), "%T %s", o, o.GetName())
	}

	got := &latest{}
	w := &Watcher{
		Dynamic: dynamic.NewForConfigOrDie(env.Config), Client: kubernetes.NewForConfigOrDie(env.Config),
		CR: config.PrometheusCR{Enabled: true, ScrapeInterval: 30 * time.Second,
			ServiceMonitorSelector:          &metav1.LabelSelector{MatchLabels: scrape},
			ServiceMonitorNamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"monitored": "yes"}},
			PodMonitorSelector:              &metav1.LabelSelector{}, // all, in the collectors' namespace only
			ScrapeConfigSelector:            &metav1.LabelSelector{},
			ScrapeConfigNamespaceSelector:   &metav1.LabelSelector{},
			// ProbeSelector null: no Probe.
			// team-a's ServiceMonitor reads its Secret there: allowed explicitly (the default
			// is the collectors' namespace only).
			SecretNamespaces: []string{"obs", "team-a"},
		},
		OwnNamespace: "obs", OnChange: got.set, MinInterval: 100 * time.Millisecond, Resync: 500 * time.Millisecond,
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	g.Eventually(got.jobs, 20*time.Second, 50*time.Millisecond).Should(Equal([]string{
		"podMonitor/obs/pm/0", "scrapeConfig/team-b/sc", "serviceMonitor/team-a/api/0"}))
	g.Expect(got.password("serviceMonitor/team-a/api/0")).To(Equal("first"))

	// team-b becomes monitored: its ServiceMonitor joins.
	nsB := &corev1.Namespace{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "team-b"}, nsB)).To(Succeed())
	nsB.Labels["monitored"] = "yes"
	g.Expect(c.Update(ctx, nsB)).To(Succeed())
	g.Eventually(got.jobs, 10*time.Second, 50*time.Millisecond).Should(ContainElement("serviceMonitor/team-b/api/0"))

	// The secret rotates: the resync reads it again.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	secret.Data["pass"] = []byte("second")
	g.Expect(c.Update(ctx, secret)).To(Succeed())
	g.Eventually(func() string { return got.password("serviceMonitor/team-a/api/0") }, 10*time.Second, 50*time.Millisecond).Should(Equal("second"))

	// An update that labels a ServiceMonitor selects it; a delete removes its job.
	un := &monv1.ServiceMonitor{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "unlabelled"}, un)).To(Succeed())
	un.Labels = scrape
	g.Expect(c.Update(ctx, un)).To(Succeed())
	g.Expect(c.Delete(ctx, smon("team-a", "api", nil, false))).To(Succeed())
	g.Eventually(got.jobs, 10*time.Second, 50*time.Millisecond).Should(Equal([]string{
		"podMonitor/obs/pm/0", "scrapeConfig/team-b/sc", "serviceMonitor/team-a/unlabelled/0", "serviceMonitor/team-b/api/0"}))

	// A missing secret leaves only that resource out.
	g.Expect(c.Create(ctx, smon("team-a", "nocreds", scrape, true))).To(Succeed())
	g.Expect(c.Delete(ctx, secret)).To(Succeed())
	g.Consistently(got.jobs, time.Second, 100*time.Millisecond).ShouldNot(ContainElement("serviceMonitor/team-a/nocreds/0"))
	g.Expect(got.jobs()).To(ContainElement("serviceMonitor/team-b/api/0"))

	// Unchanged resources report nothing new across resyncs.
	got.mu.Lock()
	n := got.n
	got.mu.Unlock()
	time.Sleep(1200 * time.Millisecond)
	got.mu.Lock()
	g.Expect(got.n).To(Equal(n), "a resync without changes reported again")
	got.mu.Unlock()

	cancel()
	g.Eventually(done, 5*time.Second).Should(Receive(BeNil()))
}
