package opampbridge

import (
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/controller/owned"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "opampbridge"

// Options configure SetupWithManager.
type Options struct {
	// Manifests are the builders' operator-wide options; start from mbridge.DefaultOptions and set
	// Image from --operator-opamp-bridge-image.
	Manifests mbridge.Options
	// Version is reported in status.version of bridges running Manifests.Image; empty means
	// DefaultVersion when Manifests.Image is the default image, nothing otherwise.
	Version string
	// Applier writes the objects; nil means a new one with FieldOwner. The collector controller's
	// may be shared.
	Applier *apply.Applier
	// MaxConcurrentReconciles is how many bridges reconcile in parallel (default 1).
	MaxConcurrentReconciles int
	// SkipNameValidation lets tests register the controller in several managers.
	SkipNameValidation bool
	// Shard, when not nil, restricts the controller to resources whose labels it matches (--shard).
	Shard labels.Selector
}

// SetupWithManager builds the Reconciler from opts and registers it: it watches OpAMPBridges and
// the objects they own (metadata only, except Deployments), through the manager's label-filtered
// cache.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Version == "" && opts.Manifests.Image == mbridge.DefaultImage {
		opts.Version = mbridge.DefaultVersion
	}
	r := &Reconciler{
		Syncer:    owned.NewSyncer(mgr, opts.Applier, FieldOwner, v1alpha1.GroupVersion.WithKind("OpAMPBridge")),
		Manifests: opts.Manifests,
		Version:   opts.Version,
	}
	return owned.NewControllerBuilder(mgr, &v1alpha1.OpAMPBridge{}, mbridge.Kinds, owned.ControllerOptions{
		Name:                    ControllerName,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		SkipNameValidation:      opts.SkipNameValidation,
	}).Complete(owned.InShard(mgr.GetClient(), opts.Shard, func() client.Object { return &v1alpha1.OpAMPBridge{} }, r))
}
