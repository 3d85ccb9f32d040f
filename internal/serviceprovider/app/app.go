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
	"k8s.io/apimachinery/pkg/labels"
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
	"github.com/otelop/otelop/internal/serviceprovider/instance"
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
	// Now is the clock of token renewal; nil means time.Now (tests move it).
	Now func() time.Time
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
// kind, and events (in the namespaces of its objects).
var onboardingRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
	{APIGroups: []string{spv1alpha1.GroupVersion.Group}, Resources: []string{"oteloperators", "oteloperators/status"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
}

// leaderElectionNamespace holds run's leader-election Lease on the onboarding cluster.
const leaderElectionNamespace = "default"

// onboardingPermissions are onboardingRules cluster-wide plus Leases only in
// leaderElectionNamespace.
func onboardingPermissions() []clustersv1alpha1.PermissionsRequest {
	return []clustersv1alpha1.PermissionsRequest{
		{Rules: onboardingRules},
		{Namespace: leaderElectionNamespace, DisableAutomaticNamespaceCreation: true, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		}},
	}
}

// all verbs a rule needs to manage an object.
var manage = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// mcpClusterRules are what the provider, and Flux with the same kubeconfig for the CRDs release,
// need in a control plane cluster-wide: the CRDs, its namespace and ClusterRole/-Binding (by
// name, except create, which RBAC cannot restrict by name), reading the users' opentelemetry.io
// objects for the deletion guard, and reading webhook configurations (which covers the
// operator's per-release read rule).
var mcpClusterRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: manage},
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch", "create"}},
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{instance.CPNamespace}, Verbs: []string{"update", "patch", "delete"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings"}, Verbs: []string{"create"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings"}, ResourceNames: []string{instance.CPClusterRole, instance.CPClusterRoleBinding}, Verbs: []string{"get", "update", "patch", "delete"}},
	{APIGroups: []string{"opentelemetry.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: []string{"get"}},
}

// mcpNamespaceRules are the provider's rights in the operator's namespace (instance.CPNamespace)
// only: the operator's ServiceAccount, its tokens (for that ServiceAccount only), the token
// holder Secrets and Helm's release Secrets, the Role and RoleBinding, and list on every type
// (to prove, before deleting the namespace, that it holds nothing the provider did not create).
var mcpNamespaceRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts", "secrets"}, Verbs: manage},
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{instance.CPServiceAccount}, Verbs: []string{"create"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"}, Verbs: manage},
	{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"list"}},
}

// MCPPermissions are the provider's control-plane token permissions: its own rules plus every
// rule it grants the workload operator (the shipped operator ClusterRole cluster-wide, the
// shipped Role in the operator's namespace). The API server lets a subject without `escalate`
// create a (Cluster)Role only with rules it holds itself (in that namespace, for a Role), and
// bind one without `bind` only if it holds its rules; holding them is narrower than
// escalate/bind, which would let the provider grant anything (cluster-admin in effect). The
// namespaced rules make the cluster provider create instance.CPNamespace if it is missing.
func MCPPermissions() []clustersv1alpha1.PermissionsRequest {
	cluster, ns := shippedrbac.OperatorRules()
	return []clustersv1alpha1.PermissionsRequest{
		{Rules: append(append([]rbacv1.PolicyRule{}, mcpClusterRules...), cluster...)},
		{Namespace: instance.CPNamespace, Rules: append(append([]rbacv1.PolicyRule{}, mcpNamespaceRules...), ns...)},
	}
}

func onboardingAccess(ctx context.Context, o Options, platform client.Client, localName string) (*rest.Config, error) {
	timeout := o.AccessTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	mgr := clusteraccess.NewClusterAccessManager(platform, o.ControllerName(), o.PodNamespace).WithTimeout(timeout).WithInterval(time.Second)
	c, err := mgr.CreateAndWaitForCluster(ctx, localName, clustersv1alpha1.PURPOSE_ONBOARDING, Scheme(),
		onboardingPermissions())
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
		// Only the provider's namespace is watched for the sources it copies, and only its own
		// Flux objects (in every tenant namespace) for their status.
		ours := labels.SelectorFromSet(labels.Set{instance.ManagedByLabel: instance.ManagedByValue})
		co.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Secret{}:          {Namespaces: map[string]cache.Config{o.PodNamespace: {}}},
			&corev1.ConfigMap{}:       {Namespaces: map[string]cache.Config{o.PodNamespace: {}}},
			&helmv2.HelmRelease{}:     {Label: ours},
			&sourcev1.OCIRepository{}: {Label: ours},
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
		WithMCPPermissions(MCPPermissions()).
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
		Reconciler:    &controller.Service{PodNamespace: o.PodNamespace, Platform: platformClient, Rotation: o.Rotation, Now: o.Now},
		Recorder:      mgr.GetEventRecorder("service-provider-otel-operator"),
		Labels:        InstanceLabels,
		WarningReasons: []string{
			spv1alpha1.ReasonVersionNotAllowed, spv1alpha1.ReasonInvalidConfiguration, spv1alpha1.ReasonUserResourcesExist, spv1alpha1.ReasonReleaseFailed,
		},
	})
	if err := ctl.SetupWithManager(mgr, platform, func() client.ObjectList { return &spv1alpha1.OtelOperatorList{} },
		apireconciler.Watch{Object: &corev1.Secret{}, Namespace: o.PodNamespace},
		apireconciler.Watch{Object: &corev1.ConfigMap{}, Namespace: o.PodNamespace},
		// Flux's status changes reach the OtelOperator they belong to at once; the poll
		// interval stays as the safety net.
		apireconciler.Watch{Object: &helmv2.HelmRelease{}, OwnerLabel: instance.InstanceLabel},
		apireconciler.Watch{Object: &sourcev1.OCIRepository{}, OwnerLabel: instance.InstanceLabel},
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

// InstanceLabels are the labels the provider keeps on each OtelOperator, as upstream's provider
// does: its instance ID, which names its workload namespace and marks every object created for it.
func InstanceLabels(o *spv1alpha1.OtelOperator) map[string]string {
	return map[string]string{instance.InstanceLabel: instance.ID(o.Namespace, o.Name)}
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
		LeaderElectionNamespace: leaderElectionNamespace,
		WebhookServer: webhook.NewServer(webhook.Options{
			CertDir: o.WebhookCertPath, CertName: o.WebhookCertName, KeyName: o.WebhookCertKey, TLSOpts: tlsOpts,
		}),
	}
}
