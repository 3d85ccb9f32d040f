package testenv

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
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
