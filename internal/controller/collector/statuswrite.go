package collector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/controller/statuswrite"
)

// updateStatus writes st when it differs from the stored status, and emits an Event when the
// Ready condition changes in a way a person wants to hear of (readyEvent). applyErr keeps
// observedGeneration where it was (it only moves on success).
//
// A transitional status (transitional) is coalesced: it is written once it has been pending for
// the Reconciler's window, and wait says when to reconcile again to write it. A final status is
// written at once, so a rollout that completes within the window costs one status write.
func (r *Reconciler) updateStatus(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, st v1beta1.OpenTelemetryCollectorStatus, applyErr error) (wait time.Duration, err error) {
	if applyErr != nil {
		st.ObservedGeneration = otelcol.Status.ObservedGeneration
	}
	key := client.ObjectKeyFromObject(otelcol)
	if equality.Semantic.DeepEqual(st, otelcol.Status) {
		r.statusWrites().Forget(key)
		return 0, applyErr
	}
	if write, wait := r.statusWrites().Decide(key, applyErr != nil || !transitional(st)); !write {
		ctrl.LoggerFrom(ctx).V(1).Info("status write deferred", "wait", wait.String())
		return wait, applyErr
	}
	before := meta.FindStatusCondition(otelcol.Status.Conditions, v1beta1.ConditionReady)
	beforeGen := otelcol.Status.ObservedGeneration
	patch := client.MergeFrom(otelcol.DeepCopy())
	otelcol.Status = st
	if err := r.Client.Status().Patch(ctx, otelcol, patch); err != nil {
		// What is pending stays pending: the retry writes it at once.
		return 0, errors.Join(applyErr, fmt.Errorf("updating status: %w", err))
	}
	r.statusWrites().Forget(key)
	r.written.record(otelcol)
	after := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady)
	if typ, ok := readyEvent(before, after, st.ObservedGeneration != beforeGen); ok {
		r.Recorder.Eventf(otelcol, nil, typ, after.Reason, "Reconcile", "Ready=%s: %s", after.Status, truncate(after.Message, 1000))
	}
	return 0, applyErr
}

// requeueBy returns result with RequeueAfter no later than wait (when wait > 0): a deferred
// transitional status is written by the reconcile that comes back when its window ends.
func requeueBy(result ctrl.Result, wait time.Duration) ctrl.Result {
	if wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
		result.RequeueAfter = wait
	}
	return result
}

// statusWrites returns the Reconciler's coalescer (a default one when the Reconciler was built
// without: tests and callers that do not use SetupWithManager).
func (r *Reconciler) statusWrites() *statuswrite.Coalescer {
	r.coalescerOnce.Do(func() {
		if r.StatusWrites == nil {
			r.StatusWrites = statuswrite.New(statuswrite.DefaultWindow)
		}
	})
	return r.StatusWrites
}

// transitional reports a status that says only that a rollout is under way: Ready=False with
// reason Progressing (the workload is rolling out) or WorkloadUnavailable (rolled out, pods not
// available yet), and nothing Stalled. Its counts and messages follow every pod, so it is
// coalesced; every other status (Ready, an error, a crash, Stalled) is final and written at once.
func transitional(st v1beta1.OpenTelemetryCollectorStatus) bool {
	if meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionStalled) {
		return false
	}
	ready := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady)
	return ready != nil && ready.Status == metav1.ConditionFalse &&
		(ready.Reason == v1beta1.ReasonProgressing || ready.Reason == v1beta1.ReasonWorkloadUnavailable)
}

// readyEvent decides whether writing the Ready condition after (over before) deserves an Event,
// and of which type. A person wants to hear that the collector became Ready (Normal), and that it
// stopped being Ready, or failed, for a reason other than a rollout the operator started (Warning);
// not of each leg of a rollout. So:
//   - Ready=True after anything else (or as the first condition): Normal;
//   - Progressing: none (the Applied Event already said what changed; the rollout ends in Ready=True
//     or in a failure, each with its Event);
//   - WorkloadUnavailable: a Warning only when a Ready collector lost pods, not while the pods of a
//     new collector or of a spec change (genChanged: the status records a new generation) start;
//   - any other reason (ReconcileError, CrashLoopBackOff, InvalidSpec, OwnershipConflict, ...):
//     a Warning when the reason is new.
func readyEvent(before, after *metav1.Condition, genChanged bool) (string, bool) {
	switch {
	case after == nil:
		return "", false
	case after.Status == metav1.ConditionTrue:
		return "Normal", before == nil || before.Status != metav1.ConditionTrue
	case after.Reason == v1beta1.ReasonProgressing:
		return "", false
	case after.Reason == v1beta1.ReasonWorkloadUnavailable:
		return "Warning", before != nil && before.Status == metav1.ConditionTrue && !genChanged
	default:
		return "Warning", before == nil || before.Status != after.Status || before.Reason != after.Reason
	}
}
