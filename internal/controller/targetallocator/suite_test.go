package targetallocator_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/controller/targetallocator"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
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
	writes = testenv.NewWriteCounter()
)

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

// startManager runs a manager with only the TargetAllocator controller, counting its write
// requests. TargetAllocators are cached unfiltered: a user's standalone resource carries no
// managed-by label (operator.CacheOptions needs the same entry).
func startManager(ctx context.Context) (<-chan struct{}, error) {
	cfg := writes.Wrap(env.Config)
	cacheOpts := operator.CacheOptions(nil)
	cached := false
	for obj := range cacheOpts.ByObject {
		if _, ok := obj.(*v1alpha1.TargetAllocator); ok {
			cached = true
		}
	}
	if !cached {
		cacheOpts.ByObject[&v1alpha1.TargetAllocator{}] = cache.ByObject{Label: labels.Everything()}
	}
	sp := syncPeriod
	cacheOpts.SyncPeriod = &sp
	skip := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 operator.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cacheOpts,
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		return nil, err
	}
	if err := targetallocator.SetupWithManager(mgr, targetallocator.Options{Manifests: mta.DefaultOptions()}); err != nil {
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
