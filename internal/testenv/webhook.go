package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// StartWebhookManager starts a manager whose webhook server listens where Options.
// WebhookInstallOptions pointed the installed webhook configurations, with metrics and probes off.
// cfg nil means e.Config (pass a wrapped copy to count requests). setup registers the handlers
// before the manager starts. It returns once the webhook server accepts connections (at most 30 s);
// cancelling ctx stops the manager, and done closes when it has.
func (e *Env) StartWebhookManager(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, setup func(ctrl.Manager) error) (mgr ctrl.Manager, done <-chan struct{}, err error) {
	if cfg == nil {
		cfg = e.Config
	}
	wio := &e.Environment.WebhookInstallOptions
	mgr, err = ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: crwebhook.NewServer(crwebhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		return nil, nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if mgr.GetWebhookServer().StartedChecker()(nil) == nil {
			return mgr, stopped, nil
		}
	}
	return mgr, stopped, fmt.Errorf("webhook server did not start within 30s")
}

// ShippedWebhooks installs the webhook configurations of config/webhook as shipped; envtest points
// them at 127.0.0.1 with its own serving certificate.
func ShippedWebhooks() envtest.WebhookInstallOptions {
	return envtest.WebhookInstallOptions{
		Paths:            []string{filepath.Join(RepoRoot(), "config", "webhook")},
		LocalServingHost: "127.0.0.1",
	}
}

// WebhookMain is the TestMain of a webhook suite: it starts an Env with the CRDs and
// ShippedWebhooks, hands it to set, starts the suite's manager with start (see
// StartWebhookManager), runs the tests, stops the manager and the Env, and exits with the tests'
// code.
func WebhookMain(m *testing.M, scheme *runtime.Scheme, set func(*Env), start func(context.Context) (<-chan struct{}, error)) {
	e, err := Start(Options{Scheme: scheme, WebhookInstallOptions: ShippedWebhooks()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	set(e)
	ctx, cancel := context.WithCancel(context.Background())
	done, err := start(ctx)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	cancel()
	if done != nil {
		<-done
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}
