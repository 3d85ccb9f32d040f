package bridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/opampbridge/config"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	s, err := Scheme()
	if err != nil {
		panic(err)
	}
	testenv.Main(m, testenv.Options{Scheme: s}, func(e *testenv.Env) { env = e })
}

// collectorYAML is a minimal v1beta1 collector.
func collectorYAML(ns, name string, labels map[string]string, receivers ...string) []byte {
	if len(receivers) == 0 {
		receivers = []string{"otlp"}
	}
	var recv, ids strings.Builder
	for _, r := range receivers {
		fmt.Fprintf(&recv, "      %s: {protocols: {grpc: {}}}\n", r)
		ids.WriteString(r + ",")
	}
	var lbl strings.Builder
	for k, v := range labels {
		fmt.Fprintf(&lbl, "    %s: %q\n", k, v)
	}
	return fmt.Appendf(nil, `apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: %s
  namespace: %s
  labels:
%s
spec:
  upgradeStrategy: automatic
  config:
    receivers:
%s    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [%s], exporters: [debug]}
`, name, ns, lbl.String(), recv.String(), strings.TrimSuffix(ids.String(), ","))
}

func collectorObject(t *testing.T, body []byte) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(body, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func createCollector(t *testing.T, body []byte) {
	t.Helper()
	u := collectorObject(t, body)
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatalf("creating %s: %v", u.GetName(), err)
	}
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func startServer(t *testing.T) *opamptest.Server {
	t.Helper()
	srv, err := opamptest.Start(opamptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

// testConfig is a bridge configuration pointing at srv, listening on loopback.
func testConfig(t *testing.T, srv *opamptest.Server, name, namespace string) *config.Config {
	t.Helper()
	body := fmt.Sprintf(`
endpoint: %s
headers: {Authorization: "Bearer ${BRIDGE_TEST_TOKEN}"}
capabilities:
  AcceptsRemoteConfig: true
  ReportsEffectiveConfig: true
  ReportsHealth: true
  ReportsRemoteConfig: true
  AcceptsRestartCommand: true
componentsAllowed:
  receivers: [otlp]
  exporters: [debug]
  processors: [batch]
`, srv.URL)
	p := filepath.Join(t.TempDir(), "remoteconfiguration.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		return map[string]string{"BRIDGE_TEST_TOKEN": "tok", "OTELCOL_NAMESPACE": namespace}[k]
	}
	cfg, err := config.Load(config.NewFlagSet(), []string{
		"--config-file=" + p, "--name=" + name, "--listen-addr=127.0.0.1:0",
		"--health-listen-addr=127.0.0.1:0", "--heartbeat-interval=0",
	}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// running is a bridge started by a test.
type running struct {
	cancel     context.CancelFunc
	done       chan error
	proxyAddr  string
	healthAddr string
}

func startBridge(t *testing.T, cfg *config.Config, opts Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	addrs := make(chan [2]string, 1)
	opts.Listening = func(p, h string) { addrs <- [2]string{p, h} }
	if opts.Logger.GetSink() == nil {
		opts.Logger = testr.NewWithOptions(t, testr.Options{Verbosity: 0})
	}
	opts.Version = "0.1.0-test"
	go func() { r.done <- Run(ctx, cfg, env.Config, opts) }()
	select {
	case a := <-addrs:
		r.proxyAddr, r.healthAddr = a[0], a[1]
	case err := <-r.done:
		cancel()
		t.Fatalf("bridge exited early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("bridge did not start listening")
	}
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *running) stop(t *testing.T) {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok && err != nil {
			t.Logf("bridge returned: %v", err)
		}
		if ok {
			close(r.done)
		}
	case <-time.After(15 * time.Second):
		t.Error("bridge did not stop")
	}
}

var _ = logr.Discard
