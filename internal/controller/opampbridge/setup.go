package opampbridge

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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
}

// SetupWithManager builds the Reconciler from opts and registers it: it watches OpAMPBridges and
// the objects they own (metadata only, except Deployments), through the manager's label-filtered
// cache.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Applier == nil {
		opts.Applier = apply.New(mgr.GetClient(), FieldOwner)
	}
	if opts.Version == "" && opts.Manifests.Image == mbridge.DefaultImage {
		opts.Version = mbridge.DefaultVersion
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = 1
	}
	r := &Reconciler{
		Client:    mgr.GetClient(),
		Applier:   opts.Applier,
		Recorder:  mgr.GetEventRecorder("opentelemetry-operator"),
		Manifests: opts.Manifests,
		Version:   opts.Version,
	}
	copts := controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}
	if opts.SkipNameValidation {
		t := true
		copts.SkipNameValidation = &t
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.OpAMPBridge{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, resyncPredicate{}))).
		WithOptions(copts)
	for _, gvk := range mbridge.Kinds {
		b = b.Owns(owned.WatchObject(gvk), builder.WithPredicates(ownedChangePredicate{}))
	}
	return b.Complete(r)
}

// resyncPredicate lets periodic resyncs (an update with an unchanged resourceVersion) through, so
// drift is corrected every sync period; a reconcile that finds nothing to do writes nothing.
type resyncPredicate struct{ predicate.Funcs }

func (resyncPredicate) Update(e event.UpdateEvent) bool {
	return e.ObjectOld != nil && e.ObjectNew != nil && e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
}

// ownedChangePredicate lets through every real change of an owned object (a new resourceVersion)
// and drops resyncs, which the owner's own resync already covers.
type ownedChangePredicate struct{ predicate.Funcs }

func (ownedChangePredicate) Update(e event.UpdateEvent) bool {
	return e.ObjectOld == nil || e.ObjectNew == nil || e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
}
