package operator

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// NewScheme returns the scheme with every type the manager reads or writes.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	return s
}

// RESTConfig loads the cluster connection from --kubeconfig, $KUBECONFIG or the in-cluster config.
func RESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", path)
}

// Run starts the manager and blocks until ctx is cancelled or the manager fails.
func Run(ctx context.Context, o Options) error {
	cfg, err := RESTConfig(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.UserAgent = "opentelemetry-operator"
	if ns := os.Getenv("WATCH_NAMESPACE"); len(o.WatchNamespaces) == 0 && ns != "" {
		o.WatchNamespaces = strings.Split(ns, ",")
	}
	cacheOpts := cache.Options{}
	if len(o.WatchNamespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.WatchNamespaces {
			cacheOpts.DefaultNamespaces[strings.TrimSpace(ns)] = cache.Config{}
		}
	}
	metricsOpts := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.MetricsSecure}
	if o.MetricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgrOpts := ctrl.Options{
		Scheme:                        NewScheme(),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        o.ProbeAddr,
		LeaderElection:                o.EnableLeaderElection,
		LeaderElectionID:              o.LeaderElectionID,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOpts,
	}
	if o.EnableWebhooks {
		mgrOpts.WebhookServer = webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort})
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("starting manager",
		"metricsAddr", o.MetricsAddr, "probeAddr", o.ProbeAddr, "watchNamespaces", o.WatchNamespaces)
	return mgr.Start(ctx)
}
