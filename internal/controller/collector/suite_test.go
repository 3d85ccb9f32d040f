package collector_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
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
	if err := restartOperator(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stopOperator()
	_ = env.Stop()
	os.Exit(code)
}

// stopOperator stops the running operator (if any) and waits until its manager has returned.
var stopOperator = func() {}

// restartOperator stops the running operator and starts a new one: a new manager with empty
// caches and an applier that remembers nothing, as after a pod restart.
func restartOperator() error {
	stopOperator()
	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := startOperator(ctx)
	if err != nil {
		cancel()
		return err
	}
	stopOperator = func() {
		cancel()
		<-stopped
		stopOperator = func() {}
	}
	return nil
}

// startOperator runs the real manager wiring (caches, controllers) against the test API server,
// with a short sync period so that resyncs happen during the tests.
func startOperator(ctx context.Context) (<-chan struct{}, error) {
	cfg := writes.Wrap(env.Config)
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
