package owned

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/otelop/otelop/internal/apply"
)

// NewSyncer returns the Syncer of an owning controller of kind owner: the manager's client, its
// Event recorder for the operator, and applier, or when nil a new applier writing as fieldOwner
// that creates missing objects and refuses those of another owner (apply.Applier.CreateMissing,
// apply.SameOwner), as the operator's shared applier does.
func NewSyncer(mgr ctrl.Manager, applier *apply.Applier, fieldOwner string, owner schema.GroupVersionKind) Syncer {
	if applier == nil {
		applier = apply.New(mgr.GetClient(), fieldOwner)
		applier.CreateMissing = true
	}
	return Syncer{
		Client:   mgr.GetClient(),
		Applier:  applier,
		Recorder: mgr.GetEventRecorder("opentelemetry-operator"),
		Owner:    owner,
	}
}

// ControllerOptions are the settings an owning controller's SetupWithManager shares.
type ControllerOptions struct {
	// Name names the controller in logs and metrics.
	Name string
	// MaxConcurrentReconciles is how many resources reconcile in parallel (0 means 1).
	MaxConcurrentReconciles int
	// SkipNameValidation lets tests register the controller in several managers.
	SkipNameValidation bool
}

// NewControllerBuilder starts the controller of an owning kind: it watches forObj on generation,
// label and annotation changes and on periodic resyncs (drift is corrected every sync period; a
// reconcile that finds nothing to do writes nothing), and each of kinds it owns (WatchObject: the
// types the manager's cache shares) on every real change. The caller adds its own watches and
// completes it.
func NewControllerBuilder(mgr ctrl.Manager, forObj client.Object, kinds []schema.GroupVersionKind, o ControllerOptions) *builder.Builder {
	copts := controller.Options{MaxConcurrentReconciles: max(o.MaxConcurrentReconciles, 1)}
	if o.SkipNameValidation {
		t := true
		copts.SkipNameValidation = &t
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(o.Name).
		For(forObj, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, ResyncPredicate{}))).
		WithOptions(copts)
	for _, gvk := range kinds {
		b = b.Owns(WatchObject(gvk), builder.WithPredicates(ChangePredicate{}))
	}
	return b
}

// ResyncPredicate lets periodic resyncs (an update with an unchanged resourceVersion) through.
type ResyncPredicate struct{ predicate.Funcs }

// Update implements predicate.Predicate.
func (ResyncPredicate) Update(e event.UpdateEvent) bool {
	return e.ObjectOld != nil && e.ObjectNew != nil && e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
}

// ChangePredicate lets through every real change of an owned object (a new resourceVersion) and
// drops resyncs, which the owner's own resync already covers.
type ChangePredicate struct{ predicate.Funcs }

// Update implements predicate.Predicate.
func (ChangePredicate) Update(e event.UpdateEvent) bool {
	return e.ObjectOld == nil || e.ObjectNew == nil || e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
}
