// Package operator wires the opentelemetry-operator manager: its flags, its controller-runtime
// manager, caches, controllers and webhooks. cmd/opentelemetry-operator stays thin.
package operator

import (
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/spf13/pflag"

	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
	"github.com/otelop/otelop/internal/controller/owned"
	"github.com/otelop/otelop/internal/controller/statuswrite"
	"github.com/otelop/otelop/internal/manifests/collector"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/webhook/certs"
	webhookinst "github.com/otelop/otelop/internal/webhook/instrumentation"
)

// Options are the manager's command-line settings. Names and defaults follow upstream's flags so
// that existing Deployments and Helm values carry over.
type Options struct {
	MetricsAddr   string
	MetricsSecure bool
	ProbeAddr     string
	// PprofAddr is where Go's /debug/pprof endpoints listen; empty disables them.
	PprofAddr            string
	WebhookPort          int
	WebhookHost          string
	EnableLeaderElection bool
	LeaderElectionID     string
	LeaseDuration        time.Duration
	RenewDeadline        time.Duration
	RetryPeriod          time.Duration
	WatchNamespaces      []string
	EnableWebhooks       bool
	// EnableReconcilers runs the controllers (collectors, target allocators, OpAMP bridges, the
	// instrumentation catch-up); false with EnableWebhooks makes a webhook-only instance
	// (--enable-reconcilers).
	EnableReconcilers       bool
	Kubeconfig              string
	CollectorImage          string
	CollectorVersion        string
	TargetAllocatorImage    string
	OpAMPBridgeImage        string
	LabelsFilter            []string
	AnnotationsFilter       []string
	FeatureGates            string
	SyncPeriod              time.Duration
	MaxConcurrentReconciles int
	FIPSDisabledComponents  string
	// StatusCoalesceWindow is how long a collector's transitional status (a rollout in progress)
	// may wait before it is written (--status-coalesce-window); 0 writes every status at once.
	StatusCoalesceWindow time.Duration
	// InstrumentationScanInterval is how often the catch-up controller looks for workloads whose
	// pods missed their instrumentation; 0 disables it.
	InstrumentationScanInterval time.Duration
	// RestartPendingWorkloads lets the catch-up controller restart pending workloads of every
	// Instrumentation (not only those annotated otelop.io/restart-pending-workloads=true).
	RestartPendingWorkloads bool
	// Rollback are the collectors' automatic rollback settings (--collector-auto-rollback,
	// --collector-rollback-deadline).
	Rollback collectorctrl.RollbackOptions
	// WorkloadRestartsPerMinute bounds the catch-up controller's restarts.
	WorkloadRestartsPerMinute int
	// InstrumentationScanPageSize is the Limit of the catch-up controller's list requests.
	InstrumentationScanPageSize int64
	// Shard selects the resources this instance reconciles (--shard; see owned.ParseShard).
	Shard string
	// APICompression asks the API server for gzip-compressed responses, watch streams included
	// (--kube-api-compression; off by default, see manager.go).
	APICompression bool
	// Certs configures the webhook serving certificate (--webhook-cert-* flags).
	Certs certs.Options
	// AutoInstrumentationImages are the default images the Instrumentation defaulting webhook
	// sets (--auto-instrumentation-<lang>-image flags).
	AutoInstrumentationImages webhookinst.Images
	// Instrumentation are the auto-instrumentation switches (--enable-<language>-instrumentation,
	// --enable-multi-instrumentation).
	Instrumentation InstrumentationFlags

	// WebhookNetworkPolicyFrom are the peers (a YAML or JSON list of NetworkPolicyPeer) the
	// operator.networkpolicy gate's NetworkPolicy admits to the webhook port
	// (--webhook-network-policy-from); empty means the API server's endpoint addresses and
	// kube-system, verified (internal/webhook/networkpolicy).
	WebhookNetworkPolicyFrom string
	// WebhookClientCAFile names a PEM file of CAs (--webhook-client-ca-file): when set, the pod
	// webhook answers only callers that present a client certificate those CAs signed (the API
	// server, configured to present one through its admission configuration).
	WebhookClientCAFile string

	// fallbackStrategy is the operator.targetallocator.fallbackstrategy gate (set by builderOptions).
	fallbackStrategy bool
	// operatorNetworkPolicy is the operator.networkpolicy gate (set by builderOptions).
	operatorNetworkPolicy bool

	// SkipControllerNameValidation lets tests start several managers in one process.
	SkipControllerNameValidation bool
}

// DefaultOptions returns the options with upstream's defaults.
func DefaultOptions() Options {
	d := collector.DefaultOptions()
	return Options{
		MetricsAddr:             ":8443",
		MetricsSecure:           true,
		ProbeAddr:               ":8081",
		WebhookPort:             9443,
		LeaderElectionID:        "9f7554c3.opentelemetry.io",
		LeaseDuration:           137 * time.Second,
		RenewDeadline:           107 * time.Second,
		RetryPeriod:             26 * time.Second,
		EnableWebhooks:          true,
		EnableReconcilers:       true,
		CollectorImage:          d.CollectorImage,
		CollectorVersion:        d.CollectorVersion,
		TargetAllocatorImage:    d.TargetAllocatorImage,
		OpAMPBridgeImage:        mbridge.DefaultImage,
		AnnotationsFilter:       d.AnnotationsFilter,
		SyncPeriod:              10 * time.Hour,
		MaxConcurrentReconciles: 16,
		FIPSDisabledComponents:  "uppercase",
		StatusCoalesceWindow:    statuswrite.DefaultWindow,
		Rollback:                collectorctrl.RollbackOptions{Deadline: collectorctrl.DefaultRollbackDeadline},
		Certs:                   certs.DefaultOptions(),

		AutoInstrumentationImages: webhookinst.DefaultImages(),
		Instrumentation:           DefaultInstrumentationFlags(),

		InstrumentationScanInterval: time.Minute,
		WorkloadRestartsPerMinute:   10,
		InstrumentationScanPageSize: 500,
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
	fs.StringVar(&o.PprofAddr, "pprof-addr", o.PprofAddr,
		"Address Go's /debug/pprof profiling endpoints bind to (unauthenticated: use a loopback address such as 127.0.0.1:6060); empty disables them.")
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
		"Serve the admission and conversion webhooks. false: a reconciler-only instance, whose readiness does not wait for a webhook server.")
	fs.BoolVar(&o.EnableReconcilers, "enable-reconcilers", o.EnableReconcilers,
		"Run the controllers (collectors, target allocators, OpAMP bridges, the instrumentation catch-up). false with --enable-webhooks: a webhook-only instance, "+
			"so the webhooks can run as a Deployment of their own, each replica serving (certificates shared through the one --webhook-cert-secret); "+
			"its leader election (for the Instrumentation image upgrade and the webhook NetworkPolicy only) uses the Lease <leader-election-id>-webhooks, "+
			"so it never competes with the reconcilers' instance. Not in upstream's operator.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"Path to a kubeconfig. Empty uses in-cluster config or $KUBECONFIG.")
	fs.StringVar(&o.CollectorImage, "collector-image", o.CollectorImage,
		"Collector image used when a collector's spec.image is empty.")
	fs.StringVar(&o.CollectorVersion, "collector-version", o.CollectorVersion,
		"Collector version the operator manages, reported in status.version.")
	fs.StringVar(&o.TargetAllocatorImage, "target-allocator-image", o.TargetAllocatorImage,
		"Target allocator image used when spec.targetAllocator.image is empty.")
	fs.StringVar(&o.OpAMPBridgeImage, "operator-opamp-bridge-image", o.OpAMPBridgeImage,
		"OpAMP bridge image used when an OpAMPBridge's spec.image is empty.")
	fs.StringSliceVar(&o.LabelsFilter, "labels-filter", o.LabelsFilter,
		"Label keys (regular expressions) of a collector that are not copied to the objects it generates.")
	fs.StringSliceVar(&o.AnnotationsFilter, "annotations-filter", o.AnnotationsFilter,
		"Annotation keys (regular expressions) of a collector that are not copied to the objects it generates.")
	fs.StringVar(&o.FeatureGates, "feature-gates", o.FeatureGates,
		"Comma-separated feature gates to enable (+name or name) or disable (-name). Known: "+knownGatesHelp()+".")
	fs.DurationVar(&o.SyncPeriod, "sync-period", o.SyncPeriod,
		"How often every watched object is reconciled again even without changes. Reconciles that change nothing write nothing.")
	fs.StringVar(&o.FIPSDisabledComponents, "fips-disabled-components", o.FIPSDisabledComponents,
		"Components the validating webhook rejects when the operator runs in FIPS mode, as kind.type (e.g. receiver.foo,exporter.bar).")
	o.Certs.BindFlags(fs)
	fs.StringVar(&o.WebhookNetworkPolicyFrom, "webhook-network-policy-from", o.WebhookNetworkPolicyFrom,
		"With the operator.networkpolicy gate (on by default): the peers the operator's NetworkPolicy admits to the webhook port, as a YAML or JSON list of "+
			"NetworkPolicyPeer (e.g. '[{ipBlock: {cidr: 10.0.0.0/24}}]'), kept even when the API server's calls do not come from them. "+
			"Empty: the addresses of the API server's endpoints (EndpointSlices of default/kubernetes) and kube-system's pods, applied only after checking that the API server still reaches the webhook through them (else the port is left open, logged). "+
			"Every other port of the operator's pods stays open.")
	fs.StringVar(&o.WebhookClientCAFile, "webhook-client-ca-file", o.WebhookClientCAFile,
		"PEM file of the CAs that sign the client certificate the API server presents to webhooks (kube-apiserver --admission-control-config-file with a kubeconfig for them). "+
			"When set, the pod webhook refuses every caller without such a certificate (conversion and the other admission webhooks accept either). Read at start-up.")
	bindAutoInstrumentationImageFlags(fs, &o.AutoInstrumentationImages)
	o.Instrumentation.BindFlags(fs)
	bindRollbackFlags(fs, &o.Rollback)
	fs.DurationVar(&o.InstrumentationScanInterval, "instrumentation-scan-interval", o.InstrumentationScanInterval,
		"How often to look for Deployments, StatefulSets and DaemonSets that ask for auto-instrumentation but run pods admitted without it (reported in each Instrumentation's status.workloads; also after every Instrumentation change). Reads pods as metadata, page by page, only in namespaces with an Instrumentation or an inject annotation. 0 disables it.")
	fs.BoolVar(&o.RestartPendingWorkloads, "restart-pending-workloads", o.RestartPendingWorkloads,
		"Restart (like kubectl rollout restart) the pending workloads of every Instrumentation, not only of those annotated otelop.io/restart-pending-workloads=true; an Instrumentation annotated false is never acted on.")
	fs.IntVar(&o.WorkloadRestartsPerMinute, "workload-restarts-per-minute", o.WorkloadRestartsPerMinute,
		"At most this many pending workloads are restarted per minute, over all Instrumentations; a workload already rolling out is never restarted.")
	fs.Int64Var(&o.InstrumentationScanPageSize, "instrumentation-scan-page-size", o.InstrumentationScanPageSize,
		"Objects per list request of the instrumentation scan: the scan's memory grows with this, not with the number of pods; smaller pages mean more requests.")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", o.MaxConcurrentReconciles,
		"How many collectors (and target allocators, OpAMP bridges) are reconciled in parallel. A reconcile mostly waits on the API server, and one that changes nothing writes nothing; lower it to spread a mass change (e.g. an operator upgrade) over more time.")
	fs.DurationVar(&o.StatusCoalesceWindow, "status-coalesce-window", o.StatusCoalesceWindow,
		"How long a collector's status may wait to be written while its workload rolls out (Ready=False, reason Progressing or WorkloadUnavailable): "+
			"such a status is written once it has been pending this long, the latest one, at most once per window; Ready, errors and crashes are written at once. "+
			"A rollout that completes within the window costs one status write. 0 writes every change at once.")
	fs.BoolVar(&o.APICompression, "kube-api-compression", o.APICompression,
		"Ask the API server for gzip-compressed responses and watch streams. Off by default: compressing every watch event costs the API server and the operator CPU, "+
			"which an operator next to its API server does not need back in bandwidth; turn it on when the link to the API server is slow or metered.")
	fs.StringVar(&o.Shard, "shard", o.Shard,
		"Reconcile only the collectors, target allocators, OpAMP bridges and Instrumentations whose labels match: a bare value "+
			"such as team-a means "+owned.ShardLabel+"=team-a; anything else is a label selector, e.g. '!"+owned.ShardLabel+
			"' for the instance that takes what no shard claims. Every instance elects its own leader (Lease <leader-election-id>-shard-<hash>). "+
			"Run the webhooks in one instance without a shard or in every instance; instances with --enable-webhooks=false cache only their shard's resources. Empty: everything.")
}

// bindAutoInstrumentationImageFlags registers upstream's --auto-instrumentation-<lang>-image flags.
func bindAutoInstrumentationImageFlags(fs *pflag.FlagSet, i *webhookinst.Images) {
	for _, f := range []struct {
		lang, name string
		image      *string
	}{
		{"java", "Java", &i.Java}, {"nodejs", "Node.js", &i.NodeJS}, {"python", "Python", &i.Python},
		{"dotnet", ".NET", &i.DotNet}, {"go", "Go", &i.Go}, {"apache-httpd", "Apache HTTPD", &i.ApacheHttpd},
		{"nginx", "Nginx", &i.Nginx},
	} {
		fs.StringVar(f.image, "auto-instrumentation-"+f.lang+"-image", *f.image,
			"Default "+f.name+" auto-instrumentation image: set on Instrumentations whose spec."+langField(f.lang)+
				".image is empty, and the target of the startup upgrade of Instrumentations still on an older default.")
	}
}

func langField(lang string) string {
	for _, l := range webhookinst.Languages {
		if l.Name == lang {
			return l.Field
		}
	}
	return lang
}

// builderOptions turns the flags into the builders' options (capabilities are added later).
func (o *Options) builderOptions() (collector.Options, error) {
	b := collector.DefaultOptions()
	b.CollectorImage = o.CollectorImage
	b.CollectorVersion = o.CollectorVersion
	b.TargetAllocatorImage = o.TargetAllocatorImage
	b.LabelsFilter = o.LabelsFilter
	b.AnnotationsFilter = o.AnnotationsFilter
	b.ProxyEnv = proxyEnv()
	gates, err := parseFeatureGates(o.FeatureGates)
	if err != nil {
		return b, err
	}
	gates.apply(&b)
	o.fallbackStrategy = gates["operator.targetallocator.fallbackstrategy"]
	o.operatorNetworkPolicy = gates["operator.networkpolicy"]
	return b, nil
}

// proxyEnv returns the operator's own proxy settings, which upstream passes on to the workloads it
// generates, in upstream's order.
func proxyEnv() []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"} {
		if v, ok := os.LookupEnv(name); ok {
			out = append(out, corev1.EnvVar{Name: name, Value: v})
		}
	}
	return out
}
