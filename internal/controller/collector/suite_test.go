package collector_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
)

var (
	env *testenv.Env
	// k8s is an uncached admin client for the tests (not the operator's).
	k8s client.Client
	// writes counts the operator's write requests (every method but GET), by "METHOD path".
	writes = &writeCounter{byReq: map[string]int{}}
)

// writeCounter records the write requests the operator's client sends.
type writeCounter struct {
	mu    sync.Mutex
	byReq map[string]int
	total int
}

func (w *writeCounter) add(r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total++
	w.byReq[r.Method+" "+r.URL.Path]++
}

// snapshot returns the total and a copy of the per-request counts.
func (w *writeCounter) snapshot() (int, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cp := make(map[string]int, len(w.byReq))
	for k, v := range w.byReq {
		cp[k] = v
	}
	return w.total, cp
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start(testenv.Options{Scheme: operator.NewScheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s = env.Client
	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := startOperator(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cancel()
	<-stopped
	_ = env.Stop()
	os.Exit(code)
}

// startOperator runs the real manager wiring (caches, controllers) against the test API server,
// with a short sync period so that resyncs happen during the tests.
func startOperator(ctx context.Context) (<-chan struct{}, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/leases/") {
				writes.add(r)
			}
			return rt.RoundTrip(r)
		})
	}
	o := operator.DefaultOptions()
	o.MetricsAddr = "0"
	o.ProbeAddr = "0"
	o.EnableWebhooks = false
	o.SyncPeriod = 2 * time.Second
	o.SkipControllerNameValidation = true
	mgr, err := operator.New(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
			os.Exit(1)
		}
	}()
	return stopped, nil
}
