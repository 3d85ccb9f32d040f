package targetallocator

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/controller/owned"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// listOwned returns the generated objects whose controller owner is ta. The ServiceMonitor kind
// is listed only when its API is served.
func (r *Reconciler) listOwned(ctx context.Context, ta *v1alpha1.TargetAllocator, prometheus bool) (apply.Objects, error) {
	kinds := make([]schema.GroupVersionKind, 0, len(mta.Kinds))
	for _, gvk := range mta.Kinds {
		if gvk != mta.ServiceMonitorGVK || prometheus {
			kinds = append(kinds, gvk)
		}
	}
	return owned.List(ctx, r.Client, ta, "TargetAllocator", kinds)
}
