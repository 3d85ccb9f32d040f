package opampbridge_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/controller/opampbridge"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
)

const (
	timeout    = 20 * time.Second
	poll       = 100 * time.Millisecond
	syncPeriod = 2 * time.Second
)

var (
	env *testenv.Env
	// k8s is an uncached admin client for the tests (not the operator's).
	k8s client.Client
	// writes counts the operator's write requests (every method but GET), by "METHOD path".
	writes = &writeCounter{byReq: map[string]int{}}
)

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
	stopped, err := startManager(ctx)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	cancel()
	if stopped != nil {
		<-stopped
	}
	_ = env.Stop()
	os.Exit(code)
}

// cacheOptions is the operator's cache configuration (internal/operator/cache.go): everything is
// cached only with our managed-by label, except our custom resources and CRD metadata, and
// managedFields are stripped.
func cacheOptions() cache.Options {
	req, _ := labels.NewRequirement(manifestutils.LabelManagedBy, selection.Equals, []string{manifestutils.ManagedBy})
	everything := cache.ByObject{Label: labels.Everything()}
	sp := syncPeriod
	return cache.Options{
		DefaultLabelSelector: labels.NewSelector().Add(*req),
		DefaultTransform:     cache.TransformStripManagedFields(),
		SyncPeriod:           &sp,
		ByObject: map[client.Object]cache.ByObject{
			&v1beta1.OpenTelemetryCollector{}: everything,
			&v1alpha1.OpAMPBridge{}:           everything,
			&v1alpha1.Instrumentation{}:       everything,
			autodetect.CacheObject():          everything,
		},
	}
}

// startManager runs a manager with only the OpAMPBridge controller, counting its write requests.
func startManager(ctx context.Context) (<-chan struct{}, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/leases/") {
				writes.add(r)
			}
			return rt.RoundTrip(r)
		})
	}
	skip := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 operator.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cacheOptions(),
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		return nil, err
	}
	if err := opampbridge.SetupWithManager(mgr, opampbridge.Options{Manifests: mbridge.DefaultOptions()}); err != nil {
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
