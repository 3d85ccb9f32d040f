package collectors

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// RestartedAtAnnotation is the pod-template annotation kubectl rollout restart sets.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// workloadFor returns the workload the operator runs a collector as, or nil for sidecars.
func workloadFor(col *v1beta1.OpenTelemetryCollector) client.Object {
	meta := appsv1.Deployment{}.ObjectMeta
	meta.Namespace, meta.Name = col.Namespace, col.Name+"-collector"
	switch col.Spec.Mode {
	case v1beta1.ModeDaemonSet:
		return &appsv1.DaemonSet{ObjectMeta: meta}
	case v1beta1.ModeStatefulSet:
		return &appsv1.StatefulSet{ObjectMeta: meta}
	case v1beta1.ModeSidecar:
		return nil
	default:
		return &appsv1.Deployment{ObjectMeta: meta}
	}
}

// Restart rolls the workloads of the collectors the bridge manages (never report-only ones) by
// setting RestartedAtAnnotation on their pod templates. Sidecars and collectors whose workload
// does not exist yet are skipped. It returns the keys restarted and every error.
func (c *Client) Restart(ctx context.Context, now time.Time) ([]Key, error) {
	cols, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	patch := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, RestartedAtAnnotation, now.UTC().Format(time.RFC3339))
	var done []Key
	var errs []error
	for _, col := range cols {
		if CheckManaged(col.Labels, c.opts.BridgeName, "") != nil {
			continue
		}
		w := workloadFor(col)
		if w == nil {
			continue
		}
		err := c.writer.Patch(ctx, w, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager))
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("restarting %s/%s: %w", col.Namespace, col.Name, err))
		default:
			done = append(done, Key{col.Namespace, col.Name})
		}
	}
	return done, joinErrors(errs)
}
