package targetallocator

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/controller/owned"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "targetallocator"

// Options configure SetupWithManager.
type Options struct {
	// Manifests are the builders' operator-wide options; start from mta.DefaultOptions and set
	// Image from --target-allocator-image. PrometheusCRDs is ignored: Capabilities decides.
	Manifests mta.Options
	// Capabilities reports the optional APIs the cluster serves now (the collector controller's
	// detector); nil means none, so no ServiceMonitor is generated.
	Capabilities func() autodetect.Capabilities
	// Version is reported in status.version of target allocators running Manifests.Image; empty
	// means DefaultVersion when Manifests.Image is the default image, nothing otherwise.
	Version string
	// Applier writes the objects; nil means a new one with FieldOwner. The collector controller's
	// may be shared.
	Applier *apply.Applier
	// MaxConcurrentReconciles is how many target allocators reconcile in parallel (default 1).
	MaxConcurrentReconciles int
	// SkipNameValidation lets tests register the controller in several managers.
	SkipNameValidation bool
	// Shard, when not nil, restricts the controller to resources whose labels it matches (--shard).
	Shard labels.Selector
	// CertValidity and CACertValidity are the validities of the mutual TLS certificates the
	// operator issues (serving and client, and their CA); zero means DefaultCertValidity and
	// DefaultCACertValidity. Each is renewed when a third of it is left.
	CertValidity, CACertValidity time.Duration
	// Now is the clock of certificate issuance; nil means time.Now (tests move it).
	Now func() time.Time
}

// SetupWithManager builds the Reconciler from opts and registers it: it watches TargetAllocators,
// the objects they own (metadata only, except Deployments) through the manager's label-filtered
// cache, and collectors, whose config and labels feed the target allocator's file.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Version == "" && opts.Manifests.Image == mta.DefaultImage {
		opts.Version = mta.DefaultVersion
	}
	if opts.CertValidity <= 0 {
		opts.CertValidity = DefaultCertValidity
	}
	if opts.CACertValidity <= 0 {
		opts.CACertValidity = DefaultCACertValidity
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Reconciler{
		Syncer:       owned.NewSyncer(mgr, opts.Applier, FieldOwner, v1alpha1.GroupVersion.WithKind("TargetAllocator")),
		Manifests:    opts.Manifests,
		Capabilities: opts.Capabilities,
		Version:      opts.Version,
		certs:        issuer{reader: mgr.GetAPIReader(), validity: opts.CertValidity, caValidity: max(opts.CACertValidity, opts.CertValidity), now: opts.Now},
	}
	// The ServiceMonitor kind is an optional API and not watched; drift is repaired on the
	// resource's resync.
	return owned.NewControllerBuilder(mgr, &v1alpha1.TargetAllocator{}, ownedKinds(false, opts.Manifests.MTLS), owned.ControllerOptions{
		Name:                    ControllerName,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		SkipNameValidation:      opts.SkipNameValidation,
	}).
		Watches(&v1beta1.OpenTelemetryCollector{}, handler.EnqueueRequestsFromMapFunc(requestsForCollector),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Complete(owned.InShard(mgr.GetClient(), opts.Shard, func() client.Object { return &v1alpha1.TargetAllocator{} }, r))
}
