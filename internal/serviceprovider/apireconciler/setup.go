package apireconciler

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Watch is an extra platform-cluster kind whose changes re-enqueue every API object, e.g. the
// Secrets and ConfigMaps in the provider's namespace that the service copies.
type Watch struct {
	// Object is an empty object of the kind.
	Object client.Object
	// Namespace limits the watch to one namespace; empty means all.
	Namespace string
}

// SetupWithManager registers the controller on the onboarding manager: For(T) there, plus the
// configuration named after the provider and the extra watches on the platform cluster's cache.
// newList returns an empty list of T.
func (c *Controller[T, C]) SetupWithManager(mgr ctrl.Manager, platform cluster.Cluster, newList func() client.ObjectList, watches ...Watch) error {
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := mgr.GetClient().List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects to re-enqueue")
			return nil
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(items))
		for _, it := range items {
			o, ok := it.(client.Object)
			if !ok {
				continue
			}
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
		return out
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named(c.opts.ProviderName).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.Workers}).
		For(c.opts.NewObject(), builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{},
			deletionPredicate,
		))).
		WatchesRawSource(source.Kind(platform.GetCache(), client.Object(c.opts.NewConfig()), all,
			predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == c.opts.ProviderName })))
	for _, w := range watches {
		ns := w.Namespace
		b = b.WatchesRawSource(source.Kind(platform.GetCache(), w.Object, all,
			predicate.NewPredicateFuncs(func(o client.Object) bool { return ns == "" || o.GetNamespace() == ns })))
	}
	return b.Complete(c)
}

// deletionPredicate passes updates of objects being deleted (their generation does not change when
// only finalizers remain).
var deletionPredicate = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectNew != nil && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}}
