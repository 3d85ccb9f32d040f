package podmutation_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/instrumentation"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/collector"
	winstrumentation "github.com/otelop/otelop/internal/webhook/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

var (
	env    *testenv.Env
	mgr    ctrl.Manager
	reads  = &requestLog{}
	scheme = runtime.NewScheme()
	// manifests are the builder options of the webhook under test: native sidecars, as the
	// envtest API server (1.37) supports them.
	manifests = func() mcollector.Options {
		o := mcollector.DefaultOptions()
		o.NativeSidecars = true
		return o
	}()
)

// TestMain starts kube-apiserver with the CRDs and the webhook configurations of
// config/webhook (envtest points them at 127.0.0.1 with its own serving certificate), then a
// manager serving the collector webhooks (so that collectors are defaulted as in a real install)
// and the pod webhook. The manager's requests are logged, to prove which informers it starts.
func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	testenv.WebhookMain(m, scheme, func(e *testenv.Env) { env = e }, startManager)
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	var done <-chan struct{}
	var err error
	mgr, done, err = env.StartWebhookManager(ctx, reads.wrap(env.Config), scheme, func(mgr ctrl.Manager) error {
		if err := collector.Setup(mgr, collector.Options{Manifests: manifests}); err != nil {
			return err
		}
		// config/webhook as shipped also sends Instrumentations to their webhooks: serve them too.
		if err := winstrumentation.Setup(mgr, winstrumentation.Options{}); err != nil {
			return err
		}
		// Every language on, Go and nginx included, so that each can be injected end to end.
		inst := instrumentation.DefaultOptions()
		inst.Disabled = nil
		return podmutation.Setup(mgr, podmutation.Options{Manifests: manifests, Instrumentation: &inst})
	})
	return done, err
}

// requestLog records the GET requests (reads, lists and watches) of clients built from a
// wrapped config, as "path?query", followed by " [metadata]" when the client asked for metadata
// only.
type requestLog struct {
	mu   sync.Mutex
	gets []string
}

func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				entry := r.URL.Path + "?" + r.URL.RawQuery
				if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
					entry += " [metadata]"
				}
				l.mu.Lock()
				l.gets = append(l.gets, entry)
				l.mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

func (l *requestLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.gets...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// warnings collects the admission warnings the API server returns to a client.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// clientWithWarnings returns an uncached client whose warnings land in the returned collector.
func clientWithWarnings(t *testing.T) (client.Client, *warnings) {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}
