package collector

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/controller/owned"
)

// SetupOptions tune the controller.
type SetupOptions struct {
	// MaxConcurrentReconciles is how many collectors reconcile in parallel (default 4).
	MaxConcurrentReconciles int
	// Detector, when set, triggers a reconcile of every collector when capabilities change and
	// starts watches for optional kinds (ServiceMonitor, Route, HTTPRoute) once their API appears.
	Detector *autodetect.Detector
	// Shard, when not nil, restricts the controller to collectors whose labels it matches (--shard):
	// requests for other collectors are dropped before Reconcile.
	Shard labels.Selector
}

// SetupWithManager registers the controller: it watches collectors and the objects they own
// (metadata-only except workloads), and cluster-scoped RBAC through its instance label.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts SetupOptions) error {
	if r.Applier == nil || !r.Applier.CreateMissing || r.Applier.Adoptable == nil {
		return errors.New("the collector controller needs an applier that creates missing objects (apply.Applier.CreateMissing " +
			"and Adoptable): a failed create is how it refuses an object someone else made under a generated name")
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = 4
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("opentelemetrycollector").
		For(&v1beta1.OpenTelemetryCollector{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, deletionPredicate{}, resyncPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles})
	for _, k := range ownedKinds {
		if k.capability != "" {
			continue
		}
		if k.clusterScoped {
			b = b.Watches(k.watchObject(), handler.EnqueueRequestsFromMapFunc(mapInstance))
			continue
		}
		b = b.Owns(k.watchObject(), builder.WithPredicates(ownedChangePredicate{}))
	}
	// A collector labelled opentelemetry.io/target-allocator=<ta> waits for <ta> to exist.
	b = b.Watches(&v1alpha1.TargetAllocator{}, handler.EnqueueRequestsFromMapFunc(requestsForTargetAllocator(mgr.GetClient())),
		builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	ctl, err := b.Build(owned.InShard(mgr.GetClient(), opts.Shard, func() client.Object { return &v1beta1.OpenTelemetryCollector{} }, r))
	if err != nil {
		return err
	}
	if opts.Detector == nil {
		return nil
	}
	trigger := make(chan event.GenericEvent, 16)
	if err := ctl.Watch(source.Channel(trigger, handler.EnqueueRequestsFromMapFunc(r.allCollectors(mgr.GetClient())))); err != nil {
		return err
	}
	watching := map[string]bool{}
	opts.Detector.Subscribe(func(caps autodetect.Capabilities) {
		for _, k := range ownedKinds {
			if k.capability == "" || watching[k.gvk.String()] || !available(k, caps) {
				continue
			}
			watching[k.gvk.String()] = true
			src := source.Kind(mgr.GetCache(), client.Object(k.metadataObject()),
				handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1beta1.OpenTelemetryCollector{}, handler.OnlyControllerOwner()))
			if err := ctl.Watch(src); err != nil {
				ctrl.Log.WithName("collector").Error(err, "watching optional kind", "kind", k.gvk.String())
			}
		}
		select {
		case trigger <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{}}:
		default:
		}
	})
	return nil
}

// allCollectors enqueues every collector (after a capability change).
func (r *Reconciler) allCollectors(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := &v1beta1.OpenTelemetryCollectorList{}
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for _, o := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
		}
		return reqs
	}
}

func mapInstance(_ context.Context, obj client.Object) []reconcile.Request {
	return requestFromInstance(obj)
}

// deletionPredicate lets through updates that start a deletion (to run the finalizer).
type deletionPredicate struct{ predicate.Funcs }

func (deletionPredicate) Update(e event.UpdateEvent) bool {
	return e.ObjectNew != nil && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}

// resyncPredicate lets periodic resyncs (an update with an unchanged resourceVersion) through, so
// drift is corrected every --sync-period; a reconcile that finds nothing to do writes nothing.
type resyncPredicate struct{ predicate.Funcs }

func (resyncPredicate) Update(e event.UpdateEvent) bool {
	return e.ObjectOld != nil && e.ObjectNew != nil && e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
}

// ownedChangePredicate ignores updates of owned objects that only touch resourceVersion-free
// noise; any real change (spec, status, labels, deletion) gets through. Metadata-only objects
// that carry a generation (PodDisruptionBudget, NetworkPolicy, HPA...) are the exception: their
// status changes (the disruption controller updates a PDB's status as its pods come and go) keep
// the generation and are ignored, since the reconciler never reads their status; a change of
// their spec moves the generation, and a change of their metadata is compared directly.
type ownedChangePredicate struct{ predicate.Funcs }

func (ownedChangePredicate) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return true
	}
	if e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
		return false
	}
	_, metadataOnly := e.ObjectNew.(*metav1.PartialObjectMetadata)
	return !metadataOnly || e.ObjectNew.GetGeneration() == 0 || !onlyStatusChanged(e.ObjectOld, e.ObjectNew)
}

// onlyStatusChanged reports whether old and new have the same generation and the same metadata
// that the reconciler reads or writes (a status-only change of an object that has a generation).
func onlyStatusChanged(old, new client.Object) bool {
	return old.GetGeneration() == new.GetGeneration() &&
		equality.Semantic.DeepEqual(old.GetLabels(), new.GetLabels()) &&
		equality.Semantic.DeepEqual(old.GetAnnotations(), new.GetAnnotations()) &&
		equality.Semantic.DeepEqual(old.GetOwnerReferences(), new.GetOwnerReferences()) &&
		equality.Semantic.DeepEqual(old.GetFinalizers(), new.GetFinalizers()) &&
		old.GetDeletionTimestamp().Equal(new.GetDeletionTimestamp())
}
