package operator

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
	instrctrl "github.com/otelop/otelop/internal/controller/instrumentation"
	bridgectrl "github.com/otelop/otelop/internal/controller/opampbridge"
	"github.com/otelop/otelop/internal/controller/statuswrite"
	tactrl "github.com/otelop/otelop/internal/controller/targetallocator"
	"github.com/otelop/otelop/internal/manifests/collector"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// setupControllers registers the capability detector and the controllers.
func setupControllers(mgr ctrl.Manager, o Options, base collector.Options, shard labels.Selector) error {
	detector := autodetect.New(mgr.GetCache())
	if err := mgr.Add(detector); err != nil {
		return err
	}
	applier := apply.New(mgr.GetClient(), collectorctrl.FieldOwner)
	// Objects missing from the cache are created (one write, no read): cheaper for the API server
	// than an apply, and a create that fails shows an object someone else made under the name.
	applier.CreateMissing = true
	applier.Adoptable = collectorctrl.Adoptable
	r := &collectorctrl.Reconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Applier:      applier,
		Recorder:     mgr.GetEventRecorder("opentelemetry-operator"),
		Capabilities: detector.Current,
		Version:      base.CollectorVersion,
		StatusWrites: statuswrite.New(o.StatusCoalesceWindow),
		Rollback:     o.Rollback,
		Build: func(otelcol *v1beta1.OpenTelemetryCollector, caps autodetect.Capabilities) ([]client.Object, error) {
			return collector.Build(*otelcol, withCapabilities(base, caps))
		},
	}
	err := r.SetupWithManager(mgr, collectorctrl.SetupOptions{
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		Detector:                detector,
		Shard:                   shard,
	})
	if err != nil {
		return err
	}
	m := mbridge.DefaultOptions()
	m.Image = o.OpAMPBridgeImage
	m.LabelsFilter, m.AnnotationsFilter = base.LabelsFilter, base.AnnotationsFilter
	m.SetGolangFlags, m.ProxyEnv = base.SetGolangFlags, base.ProxyEnv
	err = bridgectrl.SetupWithManager(mgr, bridgectrl.Options{
		Manifests:               m,
		Applier:                 applier,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		SkipNameValidation:      o.SkipControllerNameValidation,
		Shard:                   shard,
	})
	if err != nil {
		return err
	}
	t := mta.DefaultOptions()
	t.Image = base.TargetAllocatorImage
	t.LabelsFilter, t.AnnotationsFilter = base.LabelsFilter, base.AnnotationsFilter
	t.SetGolangFlags, t.ProxyEnv = base.SetGolangFlags, base.ProxyEnv
	t.FallbackStrategy = o.fallbackStrategy
	t.MTLS = base.TargetAllocatorMTLS
	err = tactrl.SetupWithManager(mgr, tactrl.Options{
		Manifests:               t,
		Capabilities:            detector.Current,
		Applier:                 applier,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		SkipNameValidation:      o.SkipControllerNameValidation,
		Shard:                   shard,
	})
	if err != nil || o.InstrumentationScanInterval <= 0 {
		return err
	}
	restarts := o.WorkloadRestartsPerMinute
	if restarts <= 0 {
		restarts = -1 // none
	}
	return instrctrl.SetupWithManager(mgr, instrctrl.Options{
		Interval:                o.InstrumentationScanInterval,
		RestartPendingWorkloads: o.RestartPendingWorkloads,
		RestartsPerMinute:       restarts,
		Enabled:                 o.Instrumentation.Options().Enabled,
		PageSize:                o.InstrumentationScanPageSize,
		Namespaces:              o.WatchNamespaces,
		SkipNameValidation:      o.SkipControllerNameValidation,
		Shard:                   shard,
	})
}

// withCapabilities returns base with the optional APIs the cluster serves now.
func withCapabilities(base collector.Options, caps autodetect.Capabilities) collector.Options {
	base.PrometheusCRDs = caps.Prometheus
	base.GatewayAPI = caps.GatewayAPI
	base.OpenShiftRoutes = caps.Routes
	base.CertManager = caps.CertManager
	return base
}

// detectStatic fills in the capabilities that only change with an operator redeploy or a cluster
// upgrade: native sidecars (Kubernetes 1.29+) and whether the operator may create cluster RBAC.
func detectStatic(ctx context.Context, cfg *rest.Config, o *collector.Options) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the API server version: %w", err)
	}
	if v, err := version.ParseGeneric(info.GitVersion); err == nil {
		o.NativeSidecars = v.AtLeast(version.MajorMinor(1, 29))
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	o.CreateRBAC = true
	for _, res := range []string{"clusterroles", "clusterrolebindings"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: res},
		}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil || !got.Status.Allowed {
			o.CreateRBAC = false
		}
	}
	return nil
}
