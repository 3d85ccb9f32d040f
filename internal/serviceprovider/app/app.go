// Package app wires the provider's two commands: init (CRDs and registration) and run (the
// OtelOperator controller), from a platform-cluster connection and the provider's namespace.
// Tests call it in-process; the binary is a thin flag parser around it.
package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	commonapi "github.com/openmcp-project/openmcp-operator/api/common"
	providerv1alpha1 "github.com/openmcp-project/openmcp-operator/api/provider/v1alpha1"
	"github.com/openmcp-project/openmcp-operator/lib/clusteraccess"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	shippedrbac "github.com/otelop/otelop/config/rbac"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/controller"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/crdinstall"
)

// Options configure init and run.
type Options struct {
	// Platform is the connection to the platform cluster (the pod's own cluster).
	Platform *rest.Config
	// PodNamespace is the provider's namespace (POD_NAMESPACE); required.
	PodNamespace string
	// ProviderName is the ServiceProvider and ProviderConfig name.
	ProviderName string
	// Environment is the OpenMCP environment name (informational).
	Environment string
	// MetricsBindAddress, HealthProbeBindAddress, MetricsSecure, EnableHTTP2, LeaderElect and the
	// cert paths configure the manager of run.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables it.
	HealthProbeBindAddress string
	// MetricsSecure serves metrics over HTTPS.
	MetricsSecure bool
	// EnableHTTP2 allows HTTP/2 on the metrics and webhook servers.
	EnableHTTP2 bool
	// LeaderElect enables leader election (on the onboarding cluster).
	LeaderElect bool
	// WebhookCertPath, WebhookCertName, WebhookCertKey locate the webhook serving certificate.
	WebhookCertPath, WebhookCertName, WebhookCertKey string
	// MetricsCertPath, MetricsCertName, MetricsCertKey locate the metrics serving certificate.
	MetricsCertPath, MetricsCertName, MetricsCertKey string
	// Rotation of the workload operator's control-plane token.
	Rotation cpaccess.Rotation
	// ClusterAccessRetry is how often pending cluster access is checked; default 10s.
	ClusterAccessRetry time.Duration
	// AccessTimeout bounds waiting for the onboarding cluster access; default 5m.
	AccessTimeout time.Duration
}

// ControllerName names the provider's ClusterRequests and AccessRequests.
func (o Options) ControllerName() string { return o.ProviderName }

func (o Options) validate() error {
	var errs []error
	if o.PodNamespace == "" {
		errs = append(errs, errors.New("POD_NAMESPACE must be set to the provider's namespace in the platform cluster"))
	}
	if o.ProviderName == "" {
		errs = append(errs, errors.New("--provider-name must not be empty"))
	}
	if o.Platform == nil {
		errs = append(errs, errors.New("no platform cluster connection (KUBECONFIG or in-cluster config)"))
	}
	return errors.Join(errs...)
}

// Scheme knows every kind the provider reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, spv1alpha1.AddToScheme,
		clustersv1alpha1.AddToScheme, providerv1alpha1.AddToScheme, helmv2.AddToScheme, sourcev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// onboardingRules are what the provider needs on the onboarding cluster: its CRD (init), its
// kind, and events.
var onboardingRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
	{APIGroups: []string{spv1alpha1.GroupVersion.Group}, Resources: []string{"oteloperators", "oteloperators/status"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

// mcpOwnRules are what the provider, and Flux with the same kubeconfig for the CRDs release, need
// in a control plane for themselves: the CRDs, the operator's namespace, ServiceAccount, token and
// RBAC objects, Helm's release Secrets, and reading the users' opentelemetry.io objects for the
// deletion guard, and list on every type (see below). No bind or escalate: MCPRules adds every rule the provider grants instead.
var mcpOwnRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"namespaces", "serviceaccounts", "secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"opentelemetry.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
	// Reading webhook configurations (any name) covers the operator's per-release read rule.
	{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: []string{"get"}},
	// Listing every namespaced type proves, before deletion, that the operator's namespace holds
	// nothing the provider did not create.
	{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"list"}},
}

// MCPRules are the provider's control-plane token permissions: its own rules plus every rule it
// grants the workload operator (the shipped operator ClusterRole and Role). The API server lets a
// subject without `escalate` create a (Cluster)Role only with rules it holds itself, and bind one
// without `bind` only if it holds its rules; holding them is narrower than escalate/bind, which
// would let the provider grant anything (cluster-admin in effect).
func MCPRules() []rbacv1.PolicyRule {
	cluster, ns := shippedrbac.OperatorRules()
	out := append([]rbacv1.PolicyRule{}, mcpOwnRules...)
	out = append(out, cluster...)
	return append(out, ns...)
}

func onboardingAccess(ctx context.Context, o Options, platform client.Client, localName string) (*rest.Config, error) {
	timeout := o.AccessTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	mgr := clusteraccess.NewClusterAccessManager(platform, o.ControllerName(), o.PodNamespace).WithTimeout(timeout).WithInterval(time.Second)
	c, err := mgr.CreateAndWaitForCluster(ctx, localName, clustersv1alpha1.PURPOSE_ONBOARDING, Scheme(),
		[]clustersv1alpha1.PermissionsRequest{{Rules: onboardingRules}})
	if err != nil {
		return nil, fmt.Errorf("getting access to the onboarding cluster: %w", err)
	}
	return c.RESTConfig(), nil
}

// Init installs the CRDs on the platform and onboarding clusters and registers the provided kind.
// It fails (and the command exits non-zero) on any error.
func Init(ctx context.Context, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	platform, err := client.New(o.Platform, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	cfg, err := onboardingAccess(ctx, o, platform, "onboarding-init")
	if err != nil {
		return err
	}
	onboarding, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	return crdinstall.Init(ctx, platform, onboarding, o.ProviderName)
}

// Run runs the controller until ctx ends.
func Run(ctx context.Context, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	scheme := Scheme()
	platformClient, err := client.New(o.Platform, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	onboardingCfg, err := onboardingAccess(ctx, o, platformClient, "onboarding-run")
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(onboardingCfg, managerOptions(o, scheme))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	platform, err := cluster.New(o.Platform, func(co *cluster.Options) {
		co.Scheme = scheme
		// Only the provider's namespace is watched for the sources it copies.
		co.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Secret{}:    {Namespaces: map[string]cache.Config{o.PodNamespace: {}}},
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{o.PodNamespace: {}}},
		}
	})
	if err != nil {
		return fmt.Errorf("connecting to the platform cluster: %w", err)
	}
	if err := mgr.Add(platform); err != nil {
		return err
	}
	retry := o.ClusterAccessRetry
	if retry <= 0 {
		retry = 10 * time.Second
	}
	access := clusteraccess.NewClusterAccessReconciler(platformClient, o.ControllerName()).
		WithRetryInterval(retry).
		WithMCPScheme(scheme).WithWorkloadScheme(scheme).
		WithMCPPermissions([]clustersv1alpha1.PermissionsRequest{{Rules: MCPRules()}}).
		// Helm installs the operator chart's own RBAC in the workload cluster; only cluster-admin
		// can grant whatever the chart version asks for.
		WithWorkloadRoleRefs([]commonapi.RoleRef{{Kind: "ClusterRole", Name: "cluster-admin"}})
	ctl := apireconciler.New(apireconciler.Options[*spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig]{
		ProviderName:  o.ProviderName,
		NewObject:     func() *spv1alpha1.OtelOperator { return &spv1alpha1.OtelOperator{} },
		NewConfig:     func() *spv1alpha1.ProviderConfig { return &spv1alpha1.ProviderConfig{} },
		Onboarding:    mgr.GetClient(),
		Platform:      platformClient,
		ClusterAccess: access,
		Reconciler:    &controller.Service{PodNamespace: o.PodNamespace, Platform: platformClient, Rotation: o.Rotation},
		Recorder:      mgr.GetEventRecorder("service-provider-otel-operator"),
		WarningReasons: []string{
			spv1alpha1.ReasonVersionNotAllowed, spv1alpha1.ReasonInvalidConfiguration, spv1alpha1.ReasonUserResourcesExist,
		},
	})
	if err := ctl.SetupWithManager(mgr, platform, func() client.ObjectList { return &spv1alpha1.OtelOperatorList{} },
		apireconciler.Watch{Object: &corev1.Secret{}, Namespace: o.PodNamespace},
		apireconciler.Watch{Object: &corev1.ConfigMap{}, Namespace: o.PodNamespace},
	); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	if o.HealthProbeBindAddress != "" && o.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}

func managerOptions(o Options, scheme *runtime.Scheme) ctrl.Options {
	var tlsOpts []func(*tlsConfig)
	if !o.EnableHTTP2 {
		tlsOpts = append(tlsOpts, disableHTTP2)
	}
	metrics := metricsserver.Options{BindAddress: o.MetricsBindAddress, SecureServing: o.MetricsSecure, TLSOpts: tlsOpts}
	if o.MetricsCertPath != "" {
		metrics.CertDir, metrics.CertName, metrics.KeyName = o.MetricsCertPath, o.MetricsCertName, o.MetricsCertKey
	}
	if o.MetricsBindAddress == "" {
		metrics.BindAddress = "0"
	}
	probe := o.HealthProbeBindAddress
	if probe == "" {
		probe = "0"
	}
	return ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metrics,
		HealthProbeBindAddress:  probe,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.ProviderName + ".oteloperator.services.open-control-plane.io",
		LeaderElectionNamespace: "default",
		WebhookServer: webhook.NewServer(webhook.Options{
			CertDir: o.WebhookCertPath, CertName: o.WebhookCertName, KeyName: o.WebhookCertKey, TLSOpts: tlsOpts,
		}),
	}
}
