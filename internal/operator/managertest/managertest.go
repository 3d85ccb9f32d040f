// Package managertest runs one controller in a real manager for envtest suites: the operator's
// scheme and cache options (label-filtered, metadata-only, managedFields reduced to our own), a short sync
// period, and a write counter around the manager's connection for zero-write proofs.
package managertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
)

// Suite is what a test package gets: the API server and the counter of the manager's writes.
type Suite struct {
	Env    *testenv.Env
	Writes *testenv.WriteCounter
	// Restart stops the manager and starts a new one (empty caches, controllers and appliers
	// that remember nothing), as after an operator restart.
	Restart func() error
}

// Main is a TestMain helper: it starts an API server, a manager whose controllers setup
// registers (resyncing every syncPeriod), hands the suite to set, runs the tests, then stops the
// manager before the API server and exits with the tests' code.
func Main(m *testing.M, syncPeriod time.Duration, setup func(ctrl.Manager) error, set func(Suite)) {
	env, err := testenv.Start(testenv.Options{Scheme: operator.NewScheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := Suite{Env: env, Writes: testenv.NewWriteCounter()}
	stop := func() {}
	s.Restart = func() error {
		stop()
		ctx, cancel := context.WithCancel(context.Background())
		stopped, err := start(ctx, s, syncPeriod, setup)
		if err != nil {
			cancel()
			stop = func() {}
			return err
		}
		stop = func() { cancel(); <-stopped }
		return nil
	}
	code := 1
	if err := s.Restart(); err == nil {
		set(s)
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	stop()
	_ = env.Stop()
	os.Exit(code)
}

func start(ctx context.Context, s Suite, syncPeriod time.Duration, setup func(ctrl.Manager) error) (<-chan struct{}, error) {
	cacheOpts := operator.CacheOptions(nil)
	cacheOpts.SyncPeriod = &syncPeriod
	skip := true
	mgr, err := ctrl.NewManager(s.Writes.Wrap(s.Env.Config), ctrl.Options{
		Scheme:                 operator.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cacheOpts,
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
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
