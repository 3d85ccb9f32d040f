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

// DefaultMinRestartInterval is the least time between two restarts: a server sending restart
// commands in a loop rolls the collectors once a minute at most.
const DefaultMinRestartInterval = time.Minute

// Restart rolls the workloads of the collectors the bridge may change (never report-only ones,
// never outside its namespaces) by setting RestartedAtAnnotation on their pod templates.
// Sidecars and collectors whose workload does not exist yet are skipped. A restart within
// MinRestartInterval of the previous one is refused. It returns the keys restarted and every
// error.
func (c *Client) Restart(ctx context.Context, now time.Time) ([]Key, error) {
	interval := c.opts.MinRestartInterval
	if interval <= 0 {
		interval = DefaultMinRestartInterval
	}
	c.restartMu.Lock()
	last := c.lastRestart
	if !last.IsZero() && now.Sub(last) < interval {
		c.restartMu.Unlock()
		return nil, fmt.Errorf("restart refused: the previous one was at %s, and the bridge restarts at most once every %s",
			last.UTC().Format(time.RFC3339), interval)
	}
	c.lastRestart = now
	c.restartMu.Unlock()
	cols, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	patch := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, RestartedAtAnnotation, now.UTC().Format(time.RFC3339))
	var done []Key
	var errs []error
	for _, col := range cols {
		if !c.mayChange(col.Namespace) || CheckManaged(col.Labels, c.bridge(), col.Namespace, "") != nil {
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
