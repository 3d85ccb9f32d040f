package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/guard"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// requeueDeletion is how soon a blocked or unfinished deletion is looked at again.
const requeueDeletion = 5 * time.Second

// Delete waits until no opentelemetry.io object is left in the control plane, then deletes the Flux
// objects (the CRDs release orphans the CRDs), the copies, the access Secret, the workload
// namespace and the control-plane identity. Namespaces are deleted but not waited for.
func (s *Service) Delete(ctx context.Context, obj *spv1alpha1.OtelOperator, cfg *spv1alpha1.ProviderConfig, cc *apireconciler.ClusterContext) (ctrl.Result, error) {
	if cc == nil {
		// Cluster access is already gone: nothing of ours can be reached any more.
		apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "cluster access already released")
		return ctrl.Result{}, nil
	}
	remaining, err := guard.Remaining(ctx, cc.MCP.Client())
	if err != nil {
		apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, err.Error())
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		apireconciler.Terminating(obj, spv1alpha1.ReasonUserResourcesExist, guard.Message(remaining, 10))
		return ctrl.Result{RequeueAfter: requeueDeletion}, nil
	}
	apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "deleting managed resources")

	id := instance.ID(obj.Namespace, obj.Name)
	all := managed(*cc, s.Platform, obj.Name, id, cc.MCPAccessSecret.Namespace, nil)
	// Flux objects first (they need the access secrets to uninstall), then the rest in reverse.
	order := make([]tracked, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		order = append(order, all[i])
	}
	pending := ""
	for _, t := range order {
		gone, err := remove(ctx, t.c, t.obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if _, isNS := t.obj.(*corev1.Namespace); !gone && !isNS && pending == "" {
			pending = fmt.Sprintf("%s %s in the %s", t.kind, key(t.obj), t.location)
		}
		if !gone && t.flux {
			// Do not pull the workload and access objects away from a release still uninstalling.
			break
		}
	}
	wlNS := instance.WorkloadNamespace(id)
	if err := syncCopies(ctx, cc.Workload.Client(), id, wlNS, nil, nil); err != nil {
		return ctrl.Result{}, err
	}
	if err := syncChartSecret(ctx, s.Platform, obj.Name, id, cc.MCPAccessSecret.Namespace, nil); err != nil {
		return ctrl.Result{}, err
	}
	if err := cpaccess.Revoke(ctx, cc.MCP.Client(), id); err != nil {
		return ctrl.Result{}, err
	}
	if pending != "" {
		apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "waiting for "+pending+" to be deleted")
		return ctrl.Result{RequeueAfter: requeueDeletion}, nil
	}
	return ctrl.Result{}, nil
}
