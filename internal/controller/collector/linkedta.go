package collector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// linkedTargetAllocatorExists reports whether the TargetAllocator that the collector's
// opentelemetry.io/target-allocator label names exists (true when there is no such label). When
// it does not, the collector is Stalled with reason TargetAllocatorNotFound and nothing is
// applied, as upstream applies nothing for such a collector; the TargetAllocator watch
// (requestsForTargetAllocator) brings the collector back when it is created.
func (r *Reconciler) linkedTargetAllocatorExists(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector) (bool, error) {
	name := otelcol.Labels[manifestutils.LabelTargetAllocator]
	if name == "" {
		return true, nil
	}
	ta := &v1alpha1.TargetAllocator{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: otelcol.Namespace, Name: name}, ta)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	st := *otelcol.Status.DeepCopy()
	msg := fmt.Sprintf("the label %s names the TargetAllocator %q, which does not exist in namespace %s",
		manifestutils.LabelTargetAllocator, name, otelcol.Namespace)
	setCondition(&st, otelcol.Generation, v1beta1.ConditionStalled, metav1.ConditionTrue, v1beta1.ReasonTargetAllocatorNotFound, msg)
	setCondition(&st, otelcol.Generation, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonTargetAllocatorNotFound, msg)
	meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
	// st keeps the observed generation: it is recorded only when the spec was applied.
	_, err = r.updateStatus(ctx, otelcol, st, nil)
	return false, err
}

// requestsForTargetAllocator maps a TargetAllocator to the collectors in its namespace whose
// opentelemetry.io/target-allocator label names it, read from the cache: their config points at
// it, and they wait while it does not exist.
func requestsForTargetAllocator(c client.Reader) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &v1beta1.OpenTelemetryCollectorList{}
		if err := c.List(ctx, list, client.InNamespace(obj.GetNamespace()),
			client.MatchingLabels{manifestutils.LabelTargetAllocator: obj.GetName()}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, col := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: col.Namespace, Name: col.Name}})
		}
		return out
	}
}
