// Package operator wires the opentelemetry-operator manager: its flags, its controller-runtime
// manager and, as they arrive, its controllers and webhooks. cmd/opentelemetry-operator stays thin.
package operator

import (
	"time"

	"github.com/spf13/pflag"
)

// Options are the manager's command-line settings. Names and defaults follow upstream's flags so
// that existing Deployments and Helm values carry over.
type Options struct {
	MetricsAddr          string
	MetricsSecure        bool
	ProbeAddr            string
	WebhookPort          int
	WebhookHost          string
	EnableLeaderElection bool
	LeaderElectionID     string
	LeaseDuration        time.Duration
	RenewDeadline        time.Duration
	RetryPeriod          time.Duration
	WatchNamespaces      []string
	EnableWebhooks       bool
	Kubeconfig           string
}

// DefaultOptions returns the options with upstream's defaults.
func DefaultOptions() Options {
	return Options{
		MetricsAddr:      ":8443",
		MetricsSecure:    true,
		ProbeAddr:        ":8081",
		WebhookPort:      9443,
		LeaderElectionID: "9f7554c3.opentelemetry.io",
		LeaseDuration:    137 * time.Second,
		RenewDeadline:    107 * time.Second,
		RetryPeriod:      26 * time.Second,
		EnableWebhooks:   true,
	}
}

// BindFlags registers every option on fs with help text that says what it changes.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr,
		"Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve metrics over HTTPS and require a Kubernetes token allowed to get /metrics (authn/authz via the API server). Set false to serve plain HTTP.")
	fs.StringVar(&o.ProbeAddr, "health-probe-addr", o.ProbeAddr,
		"Address the /healthz and /readyz endpoints bind to.")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort,
		"Port the admission and conversion webhook server listens on.")
	fs.StringVar(&o.WebhookHost, "webhook-host", o.WebhookHost,
		"Address the webhook server binds to; empty means all interfaces.")
	fs.BoolVar(&o.EnableLeaderElection, "enable-leader-election", o.EnableLeaderElection,
		"Elect a leader through a Lease so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID,
		"Name of the Lease used for leader election.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration,
		"How long non-leaders wait before trying to take over an expired lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline,
		"How long the leader keeps retrying to renew its lease before giving up leadership.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod,
		"How often leader election clients retry.")
	fs.StringSliceVar(&o.WatchNamespaces, "watch-namespace", o.WatchNamespaces,
		"Namespaces to watch (comma-separated). Empty means all namespaces. Also read from WATCH_NAMESPACE.")
	fs.BoolVar(&o.EnableWebhooks, "enable-webhooks", o.EnableWebhooks,
		"Serve the admission and conversion webhooks.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"Path to a kubeconfig. Empty uses in-cluster config or $KUBECONFIG.")
}
