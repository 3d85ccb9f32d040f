package apireconciler

import (
	"context"
	"errors"

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

// Watch is an extra platform-cluster kind whose changes re-enqueue API objects: every one, e.g.
// for the Secrets and ConfigMaps in the provider's namespace that the service copies, or, with
// OwnerLabel, only the one the changed object was made for, e.g. for the objects the service
// creates and whose status it reports.
type Watch struct {
	// Object is an empty object of the kind.
	Object client.Object
	// Namespace limits the watch to one namespace; empty means all.
	Namespace string
	// OwnerLabel, when set, is a key of Options.Labels: a watched object carrying this label
	// re-enqueues the API objects whose Options.Labels give it the same value (computed from the
	// API object, not read from its labels, so a changed label misleads nothing); objects
	// without it re-enqueue nothing.
	OwnerLabel string
}

// ownerIndex is the cache index of the API objects by the value Options.Labels gives key.
func ownerIndex(key string) string { return "apireconciler.owner-label." + key }

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
		return requests(list)
	})
	indexed := map[string]bool{}
	for _, w := range watches {
		if w.OwnerLabel == "" || indexed[w.OwnerLabel] {
			continue
		}
		if c.opts.Labels == nil {
			return errors.New("a watch with OwnerLabel needs Options.Labels")
		}
		key := w.OwnerLabel
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), c.opts.NewObject(), ownerIndex(key), func(o client.Object) []string {
			obj, ok := o.(T)
			if !ok {
				return nil
			}
			if v := c.opts.Labels(obj)[key]; v != "" {
				return []string{v}
			}
			return nil
		}); err != nil {
			return err
		}
		indexed[key] = true
	}
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
		h := all
		if w.OwnerLabel != "" {
			h = owners(mgr.GetClient(), newList, w.OwnerLabel)
		}
		b = b.WatchesRawSource(source.Kind(platform.GetCache(), w.Object, h,
			predicate.NewPredicateFuncs(func(o client.Object) bool { return ns == "" || o.GetNamespace() == ns })))
	}
	return b.Complete(c)
}

// owners maps an object to the API objects (listed from the manager's cache by ownerIndex) that
// its label key names.
func owners(cl client.Client, newList func() client.ObjectList, key string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		v := o.GetLabels()[key]
		if v == "" {
			return nil
		}
		list := newList()
		if err := cl.List(ctx, list, client.MatchingFields{ownerIndex(key): v}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the objects a watched object belongs to", "label", key, "value", v)
			return nil
		}
		return requests(list)
	})
}

// requests are reconcile requests for the items of list.
func requests(list client.ObjectList) []reconcile.Request {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(items))
	for _, it := range items {
		if o, ok := it.(client.Object); ok {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
	}
	return out
}

// deletionPredicate passes updates of objects being deleted (their generation does not change when
// only finalizers remain).
var deletionPredicate = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectNew != nil && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}}
