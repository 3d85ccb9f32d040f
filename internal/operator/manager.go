package operator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/controller/owned"
	otelwebhook "github.com/otelop/otelop/internal/webhook"
	webhookcollector "github.com/otelop/otelop/internal/webhook/collector"
	webhookinst "github.com/otelop/otelop/internal/webhook/instrumentation"
	"github.com/otelop/otelop/internal/webhook/networkpolicy"
)

// UserAgent identifies the operator's requests in API server audit logs and metrics.
const UserAgent = "opentelemetry-operator"

// NewScheme returns the scheme with every type the manager reads or writes.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}

// RESTConfig loads the cluster connection from --kubeconfig, $KUBECONFIG or the in-cluster config.
func RESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", path)
}

// New creates the manager with its caches, health checks, controllers and webhooks. The caller
// starts it (Run does both).
func New(ctx context.Context, cfg *rest.Config, o Options) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = UserAgent
	if cfg.QPS == 0 {
		// client-go's default (5 requests/s) throttles convergence of many collectors; rely on the
		// API server's priority and fairness instead, as upstream does through ctrl.GetConfig.
		cfg.QPS = -1
	}
	// client-go asks for gzip by default, and the API server then compresses every watch event it
	// sends: CPU on both sides (about 3% of the API server's and 6% of the operator's while 100
	// collectors converge) for bandwidth a cluster-local client does not need.
	cfg.DisableCompression = !o.APICompression
	if ns := os.Getenv("WATCH_NAMESPACE"); len(o.WatchNamespaces) == 0 && ns != "" {
		o.WatchNamespaces = strings.Split(ns, ",")
	}
	if err := o.checkRoles(); err != nil {
		return nil, err
	}
	shard, err := owned.ParseShard(o.Shard)
	if err != nil {
		return nil, err
	}
	metricsOpts := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.MetricsSecure}
	if o.MetricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgrOpts := ctrl.Options{
		Scheme:                        NewScheme(),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        o.ProbeAddr,
		PprofBindAddress:              o.PprofAddr,
		LeaderElection:                o.EnableLeaderElection,
		LeaderElectionID:              o.leaseID(shard),
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         shardCache(CacheOptions(o.WatchNamespaces), shard, o.EnableWebhooks),
		Controller:                    config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
	}
	if o.SyncPeriod > 0 {
		mgrOpts.Cache.SyncPeriod = &o.SyncPeriod
	}
	if o.EnableLeaderElection {
		mgrOpts.LeaderElectionNamespace = leaderElectionNamespace(o)
	}
	if o.EnableWebhooks {
		if mgrOpts.WebhookServer, err = webhookServer(o); err != nil {
			return nil, err
		}
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := addHealthChecks(mgr, o); err != nil {
		return nil, err
	}
	base, err := o.builderOptions()
	if err != nil {
		return nil, err
	}
	if err := detectStatic(ctx, cfg, &base); err != nil {
		return nil, err
	}
	if o.EnableReconcilers {
		if err := setupControllers(mgr, o, base, shard); err != nil {
			return nil, err
		}
	}
	if o.EnableWebhooks {
		inst := o.Instrumentation.Options()
		err := otelwebhook.Setup(ctx, mgr, otelwebhook.Options{
			Collector:            webhookcollector.Options{Manifests: base, FIPSDisabledComponents: fipsDisabled(o.FIPSDisabledComponents)},
			Certs:                o.Certs,
			Instrumentation:      webhookinst.Options{Images: o.AutoInstrumentationImages, Enabled: o.Instrumentation.Enabled()},
			PodInstrumentation:   &inst,
			RequirePodClientCert: o.WebhookClientCAFile != "",
		})
		if err != nil {
			return nil, err
		}
		if o.operatorNetworkPolicy {
			if err := addWebhookPolicy(mgr, o); err != nil {
				return nil, err
			}
		}
	}
	return mgr, nil
}

// checkRoles refuses an instance that would do nothing and a shard without reconcilers.
func (o Options) checkRoles() error {
	if !o.EnableReconcilers && !o.EnableWebhooks {
		return fmt.Errorf("--enable-reconcilers=false and --enable-webhooks=false: the instance would do nothing; keep one of them true")
	}
	if !o.EnableReconcilers && o.Shard != "" {
		return fmt.Errorf("--shard=%s with --enable-reconcilers=false: a shard selects what an instance reconciles; a webhook-only instance serves every shard", o.Shard)
	}
	return nil
}

// leaseID is the leader election Lease of the instance: the shard's (owned.ShardLeaseID), or for
// a webhook-only instance <leader-election-id>-webhooks, so that its replicas (which elect a
// leader only for the Instrumentation image upgrade and the webhook NetworkPolicy) never hold
// the reconcilers' Lease.
func (o Options) leaseID(shard labels.Selector) string {
	if !o.EnableReconcilers {
		return o.LeaderElectionID + WebhookLeaseSuffix
	}
	return owned.ShardLeaseID(o.LeaderElectionID, shard)
}

// WebhookLeaseSuffix ends the Lease name of webhook-only instances (--enable-reconcilers=false).
const WebhookLeaseSuffix = "-webhooks"

// Run creates the manager and blocks until ctx is cancelled or the manager fails.
func Run(ctx context.Context, o Options) error {
	cfg, err := RESTConfig(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	mgr, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("starting manager", "version", o.CollectorVersion,
		"metricsAddr", o.MetricsAddr, "probeAddr", o.ProbeAddr, "watchNamespaces", o.WatchNamespaces)
	return mgr.Start(ctx)
}

// leaderElectionNamespace is the pod's namespace in a cluster (controller-runtime's default, from
// the service account mount). Outside a cluster, e.g. a local process started with a
// ServiceAccount token, it falls back to --webhook-cert-namespace, the other place the operator's
// namespace is configured.
func leaderElectionNamespace(o Options) string {
	if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return o.Certs.Namespace
}

// serviceAccountNamespaceFile holds the pod's namespace in a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// fipsDisabled returns the components to reject, only when the host runs in FIPS mode (as
// upstream, the list has no effect elsewhere).
func fipsDisabled(list string) []string {
	data, err := os.ReadFile("/proc/sys/crypto/fips_enabled")
	if err != nil || strings.TrimSpace(string(data)) != "1" {
		return nil
	}
	var out []string
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// addWebhookPolicy adds the keeper of the NetworkPolicy that limits the webhook port (the
// operator.networkpolicy gate).
func addWebhookPolicy(mgr ctrl.Manager, o Options) error {
	from, err := parsePeers(o.WebhookNetworkPolicyFrom)
	if err != nil {
		return err
	}
	ns := leaderElectionNamespace(o)
	c := mgr.GetClient()
	return mgr.Add(&networkpolicy.Keeper{
		Client:      c,
		Reader:      mgr.GetAPIReader(),
		Namespace:   ns,
		ServiceName: o.Certs.ServiceName,
		WebhookPort: int32(o.WebhookPort),
		From:        from,
		Reached: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			return webhookinst.Reached(ctx, c, ns)
		},
		Settle:   5 * time.Second,
		Attempts: 3,
		Interval: 10 * time.Minute,
	})
}

// webhookServer is the webhook server of the flags; with --webhook-client-ca-file it verifies the
// client certificates callers present.
func webhookServer(o Options) (webhook.Server, error) {
	wopts := webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.Certs.CertDir}
	if o.WebhookClientCAFile != "" {
		clientCA, err := otelwebhook.ClientCA(o.WebhookClientCAFile)
		if err != nil {
			return nil, err
		}
		wopts.TLSOpts = append(wopts.TLSOpts, clientCA)
	}
	return webhook.NewServer(wopts), nil
}

// parsePeers reads --webhook-network-policy-from: empty means nil (the verified default), else a
// non-empty YAML or JSON list of NetworkPolicyPeer.
func parsePeers(s string) ([]networkingv1.NetworkPolicyPeer, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var from []networkingv1.NetworkPolicyPeer
	if err := yaml.UnmarshalStrict([]byte(s), &from); err != nil {
		return nil, fmt.Errorf("--webhook-network-policy-from: not a list of NetworkPolicyPeer: %w", err)
	}
	if len(from) == 0 {
		return nil, fmt.Errorf("--webhook-network-policy-from: an empty list would admit no one; disable the operator.networkpolicy gate instead")
	}
	return from, nil
}
