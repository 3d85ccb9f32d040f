package targetallocator

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
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
}

// SetupWithManager builds the Reconciler from opts and registers it: it watches TargetAllocators,
// the objects they own (metadata only, except Deployments) through the manager's label-filtered
// cache, and collectors, whose config and labels feed the target allocator's file.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Applier == nil {
		opts.Applier = apply.New(mgr.GetClient(), FieldOwner)
	}
	if opts.Version == "" && opts.Manifests.Image == mta.DefaultImage {
		opts.Version = mta.DefaultVersion
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = 1
	}
	r := &Reconciler{
		Client:       mgr.GetClient(),
		Applier:      opts.Applier,
		Recorder:     mgr.GetEventRecorder("opentelemetry-operator"),
		Manifests:    opts.Manifests,
		Capabilities: opts.Capabilities,
		Version:      opts.Version,
	}
	copts := controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}
	if opts.SkipNameValidation {
		t := true
		copts.SkipNameValidation = &t
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.TargetAllocator{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, resyncPredicate{}))).
		Watches(&v1beta1.OpenTelemetryCollector{}, handler.EnqueueRequestsFromMapFunc(requestsForCollector),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		WithOptions(copts)
	for _, gvk := range mta.Kinds {
		if gvk == mta.ServiceMonitorGVK {
			continue // optional API; drift is repaired on the resource's resync
		}
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
