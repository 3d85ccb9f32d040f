package targetallocator

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// errOwnerMissing means the collector named in the owner reference is not in the cache (yet, or
// any more): reconciling now would rewrite the file as if the target allocator were standalone.
var errOwnerMissing = fmt.Errorf("owning collector not found")

// findCollector returns the collector that uses ta, read from the cache: the
// OpenTelemetryCollector of its owner references, else the one collector in its namespace
// labelled opentelemetry.io/target-allocator=<ta>; nil when there is none. Several labelled
// collectors are an error: the target allocator can select the pods of only one.
func (r *Reconciler) findCollector(ctx context.Context, ta *v1alpha1.TargetAllocator) (*v1beta1.OpenTelemetryCollector, error) {
	for _, ref := range ta.OwnerReferences {
		if ref.Kind != "OpenTelemetryCollector" {
			continue
		}
		col := &v1beta1.OpenTelemetryCollector{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: ta.Namespace, Name: ref.Name}, col)
		if apierrors.IsNotFound(err) || (err == nil && col.UID != ref.UID) {
			return nil, errOwnerMissing
		}
		if err != nil {
			return nil, err
		}
		return col, nil
	}
	list := &v1beta1.OpenTelemetryCollectorList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ta.Namespace), client.MatchingLabels{mta.CollectorLabel: ta.Name}); err != nil {
		return nil, fmt.Errorf("listing collectors: %w", err)
	}
	switch len(list.Items) {
	case 0:
		return nil, nil
	case 1:
		return &list.Items[0], nil
	default:
		return nil, reconcile.TerminalError(fmt.Errorf("%d collectors carry the label %s=%s; the target allocator serves one", len(list.Items), mta.CollectorLabel, ta.Name))
	}
}

// requestsForCollector maps a collector to the target allocators it uses: the one it owns (named
// after it) when spec.targetAllocator.enabled, and the one its label names.
func requestsForCollector(_ context.Context, obj client.Object) []reconcile.Request {
	col, ok := obj.(*v1beta1.OpenTelemetryCollector)
	if !ok {
		return nil
	}
	var out []reconcile.Request
	if col.Spec.TargetAllocator.Enabled {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: col.Namespace, Name: col.Name}})
	}
	if name := col.Labels[mta.CollectorLabel]; name != "" && name != col.Name {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: col.Namespace, Name: name}})
	}
	return out
}
