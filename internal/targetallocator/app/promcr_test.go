package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/targetallocator/promcr"
	"github.com/otelop/otelop/internal/testenv"
)

// TestPrometheusCR runs the whole allocator with prometheus_cr enabled against a real API server
// with the Prometheus Operator CRDs: a ScrapeConfig's targets (one dropped by its relabelling,
// so the filter sees the resource's rules) are shared among the collectors; a ServiceMonitor's
// kubernetes_sd finds only its Service's metrics port (the generated relabelling, run by the
// relabel filter); its Secret-backed basic auth is in /scrape_configs redacted over HTTP; and
// deleting the ScrapeConfig removes its job.
func TestPrometheusCR(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	ns := "promcr"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{"app.kubernetes.io/component": "opentelemetry-collector", "app.kubernetes.io/instance": ns + ".c"}
	ids := []string{"c-collector-0", "c-collector-1"}
	for i, id := range ids {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns, Labels: sel},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i), Containers: []corev1.Container{{Name: "otc-container", Image: "otelcol"}}}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
		StringData: map[string]string{"user": "scraper", "pass": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another tenant's namespace: its ScrapeConfig names a Secret of its own namespace, which is not
	// the collectors' and not in secret_namespaces, so the allocator reads no secret there and leaves
	// the job out (upstream reads secrets in the collectors' namespace only).
	other := "promcr-other"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(other).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: other},
		StringData: map[string]string{"user": "scraper", "pass": "other-tenant-pass"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create(t, dyn, promcr.ScrapeConfigs, other, `
apiVersion: monitoring.coreos.com/v1alpha1
kind: ScrapeConfig
metadata: {name: foreign}
spec:
  staticConfigs: [{targets: ["127.0.0.4:1"]}]
  basicAuth:
    username: {name: creds, key: user}
    password: {name: creds, key: pass}
`)
	var targets []string
	for n := 0; n < 20; n++ {
		targets = append(targets, fmt.Sprintf("127.0.0.2:%d", 9000+n))
	}
	create(t, dyn, promcr.ScrapeConfigs, ns, fmt.Sprintf(`
apiVersion: monitoring.coreos.com/v1alpha1
kind: ScrapeConfig
metadata: {name: static}
spec:
  staticConfigs:
  - targets: [%s, "127.0.0.3:1"]
  relabelings:
  - {action: Drop, sourceLabels: [__address__], regex: "127\\.0\\.0\\.3:1"}
`, `"`+strings.Join(targets, `", "`)+`"`))
	create(t, dyn, promcr.ServiceMonitors, ns, `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  endpoints:
  - port: metrics
    basicAuth:
      username: {name: creds, key: user}
      password: {name: creds, key: pass}
`)

	// EndpointSlices for the ServiceMonitor's kubernetes_sd (envtest runs no endpoint controller):
	// the api Service matches its selector, db does not; only api's metrics port is its endpoint.
	for _, name := range []string{"api", "db"} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "metrics", Port: 8080}, {Name: "other", Port: 9090}}}}
		if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// FQDN addresses: the API server refuses loopback IPs in endpoints, and nothing dials them.
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name + "-1", Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeFQDN,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{name + "-0.localhost"}}, {Addresses: []string{name + "-1.localhost"}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("metrics"), Port: ptr.To[int32](8080)}, {Name: ptr.To("other"), Port: ptr.To[int32](9090)}}}
		if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A Service with more than 1,000 endpoints (Endpoints objects stop at 1,000 addresses): the
	// default discovery (EndpointSlices, as upstream's allocator) sees all of them.
	create(t, dyn, promcr.ServiceMonitors, ns, `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: big}
spec:
  selector: {matchLabels: {app: big}}
  endpoints:
  - port: metrics
`)
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: ns, Labels: map[string]string{"app": "big"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "metrics", Port: 8080}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const bigEndpoints = 1200
	for s := 0; s < 2; s++ {
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", s), Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: "big"}},
			AddressType: discoveryv1.AddressTypeFQDN,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("metrics"), Port: ptr.To[int32](8080)}}}
		for i := 0; i < bigEndpoints/2; i++ {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("big-%d.localhost", s*bigEndpoints/2+i)}})
		}
		if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	cfg, err := config.Parse([]byte(fmt.Sprintf(`
collector_namespace: %s
collector_selector:
  matchlabels: {app.kubernetes.io/component: opentelemetry-collector, app.kubernetes.io/instance: %s.c}
filter_strategy: relabel-config
prometheus_cr:
  enabled: true
  scrape_interval: 15s
  service_monitor_selector: {}
  scrape_config_selector: {}
  scrape_config_namespace_selector: {}
config:
  scrape_configs: []
`, ns, ns)), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ListenAddr = testenv.FreeAddr(t)
	cfg.KubeConfigPath = kubeconfig(t)
	p := newPKI(t)
	p.issue(t, "127.0.0.1", x509.ExtKeyUsageServerAuth, "server")
	if err := os.WriteFile(filepath.Join(p.dir, "ca.crt"), p.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.HTTPS = config.HTTPS{Enabled: true, ListenAddr: testenv.FreeAddr(t), CAFilePath: filepath.Join(p.dir, "ca.crt"),
		TLSCertFilePath: filepath.Join(p.dir, "server.crt"), TLSKeyFilePath: filepath.Join(p.dir, "server.key")}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	base := "http://" + cfg.ListenAddr

	want := strings.Join(sorted(targets), ",")
	waitUntil(t, func() string {
		if got := unionJob(t, base, "scrapeConfig/promcr/static", ids...); got != want {
			return "got " + got
		}
		return ""
	})
	// The ServiceMonitor's job: api's metrics port only, with the labels the relabelling sets.
	waitUntil(t, func() string {
		if got := unionJob(t, base, "serviceMonitor/promcr/api/0", ids...); got != "api-0.localhost:8080,api-1.localhost:8080" {
			return "got " + got
		}
		return ""
	})
	waitUntil(t, func() string {
		if got := strings.Count(unionJob(t, base, "serviceMonitor/promcr/big/0", ids...), ".localhost:8080"); got != bigEndpoints {
			return fmt.Sprintf("big: %d of %d targets", got, bigEndpoints)
		}
		return ""
	})
	body := get(t, base+"/scrape_configs")
	for _, s := range []string{`"serviceMonitor/promcr/api/0"`, `"password":"\u003csecret\u003e"`, `"scrape_interval":"15s"`} {
		if !strings.Contains(body, s) {
			t.Errorf("/scrape_configs lacks %s:\n%s", s, body)
		}
	}
	if strings.Contains(body, "hunter2") {
		t.Errorf("/scrape_configs shows the secret over plain HTTP:\n%s", body)
	}
	if strings.Contains(body, "scrapeConfig/promcr-other/foreign") {
		t.Errorf("a job whose Secret is outside secret_namespaces was served:\n%s", body)
	}
	// Over mutual TLS the collector gets the Secret's value, as upstream serves it.
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	mtls := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{p.clientCert}}}}
	resp, err := mtls.Get("https://" + cfg.HTTPS.ListenAddr + "/scrape_configs")
	if err != nil {
		t.Fatal(err)
	}
	secured, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(secured), `"password":"hunter2"`) {
		t.Errorf("/scrape_configs over mTLS lacks the ServiceMonitor's password:\n%s", secured)
	}

	if err := dyn.Resource(promcr.ScrapeConfigs).Namespace(ns).Delete(ctx, "static", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() string {
		var jobs map[string]any
		getJSON(t, base+"/jobs", &jobs)
		if _, ok := jobs["scrapeConfig/promcr/static"]; ok {
			return fmt.Sprint("jobs ", jobs)
		}
		if b := get(t, base+"/scrape_configs"); strings.Contains(b, "scrapeConfig/promcr/static") {
			return "scrape_configs still has the job"
		}
		return ""
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, doc string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
