package instrumentation

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/inject"
)

// Reconciler finds the workloads that ask for instrumentation but run pods admitted without it,
// reports them in each Instrumentation's status.workloads and, where allowed, restarts them. It
// always reconciles everything at once (the request is ignored): Instrumentation changes and a
// timer (Interval) both queue the one key.
type Reconciler struct {
	// Client reads Instrumentations from the manager's cache and writes status, Events' objects
	// and restarts.
	Client client.Client
	// Scanner reads namespaces, workloads, ReplicaSets and pods uncached, page by page.
	Scanner Scanner
	// Recorder emits Events on Instrumentations, only on transitions and restarts.
	Recorder events.EventRecorder
	// Interval between scans (a scan also follows every Instrumentation change).
	Interval time.Duration
	// RestartAll restarts pending workloads of every Instrumentation not annotated
	// RestartOptInAnnotation=false (--restart-pending-workloads); otherwise only those of
	// Instrumentations annotated RestartOptInAnnotation=true.
	RestartAll bool
	// Limiter bounds restarts (shared over scans).
	Limiter *Limiter
	// Namespaces, when not empty, is the only namespaces scanned (--watch-namespace).
	Namespaces []string
	// Shard, when not nil, restricts the scan to Instrumentations whose labels it matches (--shard).
	Shard labels.Selector
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Sidecars makes this the sidecar path (sidecar.go): it follows sidecar-mode
	// OpenTelemetryCollectors instead of Instrumentations, with the same scan and restarts.
	Sidecars bool

	// lastScan is when the last scan started (UnixNano), for coalescing.
	lastScan atomic.Int64
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile implements reconcile.Reconciler: scan, write the statuses that changed, restart.
//
// With a shard, the scan resolves workloads' requests against every Instrumentation (each shard
// then sees the same want and the same restart record), but writes the status only of its own
// Instrumentations and restarts only the workloads whose restart falls to one of them
// (Workload.RestartFor): two shards never restart one workload each for its own part.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	if r.Sidecars {
		return r.reconcileSidecars(ctx)
	}
	r.lastScan.Store(time.Now().UnixNano())
	all, err := r.instrumentations(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var items []v1alpha1.Instrumentation
	for _, in := range all {
		if r.inShard(&in) {
			items = append(items, in)
		}
	}
	if len(items) == 0 {
		pendingWorkloads.Set(0)
		return ctrl.Result{}, nil // the next Instrumentation to be created queues a scan
	}
	keys := make([]types.NamespacedName, 0, len(items))
	for _, in := range items {
		keys = append(keys, types.NamespacedName{Namespace: in.Namespace, Name: in.Name})
	}
	scansTotal.Inc()
	workloads, sums, err := r.scan(ctx, NewIndex(all), keys)
	if err != nil {
		return ctrl.Result{}, err
	}
	errs := r.writeStatuses(ctx, items, keys, sums)
	byKey := map[types.NamespacedName]*v1alpha1.Instrumentation{}
	for i := range all {
		byKey[types.NamespacedName{Namespace: all[i].Namespace, Name: all[i].Name}] = &all[i]
	}
	for i := range items {
		byKey[keys[i]] = &items[i] // the copies writeStatuses updated
	}
	result := ctrl.Result{RequeueAfter: r.Interval}
	errs = append(errs, r.restartPending(ctx, workloads, byKey, &result)...)
	if len(errs) > 0 {
		return ctrl.Result{}, fmt.Errorf("%v", errs)
	}
	return result, nil
}

func (r *Reconciler) sharded() bool { return r.Shard != nil && !r.Shard.Empty() }

// inShard reports whether this instance acts on obj (writes its status, restarts for it).
func (r *Reconciler) inShard(obj client.Object) bool {
	return !r.sharded() || r.Shard.Matches(labels.Set(obj.GetLabels()))
}

// instrumentations returns every live Instrumentation of the namespaces scanned, whatever its
// shard: from the cache without a shard; with one, uncached (an instance without webhooks caches
// only its shard's).
func (r *Reconciler) instrumentations(ctx context.Context) ([]v1alpha1.Instrumentation, error) {
	var all []v1alpha1.Instrumentation
	if !r.sharded() {
		list := &v1alpha1.InstrumentationList{}
		if err := r.Client.List(ctx, list); err != nil {
			return nil, err
		}
		all = list.Items
	} else {
		nss := r.Namespaces
		if len(nss) == 0 {
			nss = []string{""}
		}
		list := &v1alpha1.InstrumentationList{}
		for _, ns := range nss {
			if err := r.Scanner.list(ctx, list, ns, &Stats{}, func() { all = append(all, list.Items...) }); err != nil {
				return nil, fmt.Errorf("listing instrumentations: %w", err)
			}
		}
	}
	return slices.DeleteFunc(all, func(in v1alpha1.Instrumentation) bool {
		return in.DeletionTimestamp != nil || (len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, in.Namespace))
	}), nil
}

// scan reads the workloads of the namespaces ix selects, sums them up per Instrumentation of
// keys and sets the scan metrics.
func (r *Reconciler) scan(ctx context.Context, ix Index, keys []types.NamespacedName) ([]*Workload, map[types.NamespacedName]*Summary, error) {
	start := time.Now()
	stats := &Stats{}
	nss, err := r.Scanner.Namespaces(ctx, ix, r.Namespaces, stats)
	if err != nil {
		return nil, nil, err
	}
	var workloads []*Workload
	for ns, ann := range nss {
		ws, err := r.Scanner.Namespace(ctx, ns, ann, ix, stats)
		if err != nil {
			return nil, nil, err
		}
		workloads = append(workloads, ws...)
	}
	sums := Summarize(keys, workloads)
	scanSeconds.Set(time.Since(start).Seconds())
	scanRequests.Set(float64(stats.Requests))
	scanPods.Set(float64(stats.Pods))
	total := 0
	for _, s := range sums {
		total += len(s.Pending)
	}
	pendingWorkloads.Set(float64(total))
	ctrl.LoggerFrom(ctx).V(1).Info("scanned", "namespaces", stats.Namespaces, "workloads", stats.Workloads, "following", len(workloads),
		"replicaSets", stats.ReplicaSets, "pods", stats.Pods, "requests", stats.Requests, "took", time.Since(start).String())
	return workloads, sums, nil
}

// writeStatuses patches the status of every Instrumentation whose workloads changed, with an
// Event on a transition; an Instrumentation deleted since the list is skipped.
func (r *Reconciler) writeStatuses(ctx context.Context, items []v1alpha1.Instrumentation, keys []types.NamespacedName, sums map[types.NamespacedName]*Summary) []error {
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for i := range items {
		in := &items[i]
		want := sums[keys[i]].Status()
		if equality.Semantic.DeepEqual(in.Status.Workloads, want) {
			continue
		}
		ev := Transition(in.Status.Workloads, want)
		patch := client.MergeFrom(in.DeepCopy())
		in.Status.Workloads = want
		if err := r.Client.Status().Patch(ctx, in, patch); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("writing the status of Instrumentation %s: %w", keys[i], err))
			}
			continue
		}
		log.Info("workloads", "instrumentation", keys[i].String(), "instrumented", want.Instrumented, "pending", want.Pending)
		if ev != nil {
			r.Recorder.Eventf(in, nil, ev.Type, ev.Reason, "Scan", "%s", ev.Note)
		}
	}
	return errs
}

// restartPending restarts the workloads whose restart falls to one of this shard's
// Instrumentations (byKey holds every shard's).
func (r *Reconciler) restartPending(ctx context.Context, workloads []*Workload, byKey map[types.NamespacedName]*v1alpha1.Instrumentation, result *ctrl.Result) []error {
	optIn := func(w *Workload, k types.NamespacedName) bool { return r.optIn(w, byKey[k]) }
	regarding := func(k types.NamespacedName) client.Object {
		if in := byKey[k]; in != nil && r.inShard(in) {
			return in
		}
		return nil
	}
	return r.restartWorkloads(ctx, workloads, optIn, regarding, result)
}

// restartWorkloads restarts the workloads a restart fixes and optIn allows, as far as the rate
// limit allows; when it defers a restart it shortens result's RequeueAfter to the limiter's wait.
// regarding returns the object (Instrumentation or sidecar collector) of a key that this instance
// acts for, or nil (another shard's, or gone): a workload is restarted only by the instance of
// the object its restart falls to (Workload.RestartFor), and Events go to this instance's objects.
// Instrumentations and sidecar collectors share the Limiter.
func (r *Reconciler) restartWorkloads(ctx context.Context, workloads []*Workload, optIn func(*Workload, types.NamespacedName) bool,
	regarding func(types.NamespacedName) client.Object, result *ctrl.Result) []error {
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for _, w := range RestartCandidates(workloads, optIn) {
		key, _ := w.RestartFor(optIn)
		owner := regarding(key)
		if owner == nil {
			continue // another shard's object restarts it
		}
		now := r.now()
		if !r.Limiter.Allow(now) {
			if wait := r.Limiter.Wait(now); wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
				result.RequeueAfter = wait
			}
			log.Info("restart deferred by the rate limit", "kind", w.Kind, "namespace", w.Namespace, "name", w.Name)
			break
		}
		if err := r.restart(ctx, w, now); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
				continue // gone or replaced since the scan; the next scan sees the new one
			}
			r.Recorder.Eventf(owner, w.object(), "Warning", EventRestartFailed, "Restart", "Restarting %s %s/%s: %v", w.Kind, w.Namespace, w.Name, err)
			errs = append(errs, err)
			continue
		}
		restartsTotal.Inc()
		log.Info("restarted", "kind", w.Kind, "namespace", w.Namespace, "name", w.Name, "for", w.Record())
		for _, key := range instrumentationsOf(w) {
			if obj := regarding(key); obj != nil {
				// The workload as the related object keeps each restart its own Event (isomorphic
				// Events are merged into one series).
				r.Recorder.Eventf(obj, w.object(), "Normal", EventWorkloadRestarted, "Restart",
					"Restarted %s %s/%s so that its pods get %s", w.Kind, w.Namespace, w.Name, w.Record())
			}
		}
	}
	return errs
}

// optIn reports whether w, pending for in, may be restarted: in must opt in (or
// --restart-pending-workloads), and a workload of another namespace must opt in itself, so that
// one tenant's Instrumentation never restarts another tenant's workloads on its own say.
func (r *Reconciler) optIn(w *Workload, in *v1alpha1.Instrumentation) bool {
	if in == nil {
		return false
	}
	return r.optInFor(w, in)
}

// optInFor is optIn for an Instrumentation or a sidecar collector (obj must not be nil).
func (r *Reconciler) optInFor(w *Workload, obj client.Object) bool {
	v, set := obj.GetAnnotations()[RestartOptInAnnotation]
	if set && inject.IsFalse(v) {
		return false
	}
	if w.Namespace != obj.GetNamespace() && !w.OptIn {
		return false
	}
	return inject.IsTrue(v) || r.RestartAll
}

// object refers to the workload (for Events' related object).
func (w *Workload) object() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: w.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: w.UID}}
}

func instrumentationsOf(w *Workload) []types.NamespacedName {
	var out []types.NamespacedName
	for _, want := range w.Want {
		if !slices.Contains(out, want.Instrumentation) {
			out = append(out, want.Instrumentation)
		}
	}
	return out
}

// restart does what `kubectl rollout restart` does (a new restartedAt annotation on the pod
// template), adding RestartedForAnnotation; the UID in the patch makes the API server refuse it if
// the workload was replaced by another of the same name since the scan.
func (r *Reconciler) restart(ctx context.Context, w *Workload, now time.Time) error {
	body, err := RestartPatch(w, now)
	if err != nil {
		return err
	}
	var obj client.Object
	switch w.Kind {
	case KindDeployment:
		obj = &appsv1.Deployment{}
	case KindStatefulSet:
		obj = &appsv1.StatefulSet{}
	case KindDaemonSet:
		obj = &appsv1.DaemonSet{}
	default:
		return fmt.Errorf("cannot restart a %s", w.Kind)
	}
	obj.SetNamespace(w.Namespace)
	obj.SetName(w.Name)
	return r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body))
}

// RestartPatch returns the JSON merge patch that restarts w at now.
func RestartPatch(w *Workload, now time.Time) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": w.UID},
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			RestartedAtAnnotation:      now.UTC().Format(time.RFC3339),
			w.restartedForAnnotation(): w.Record(),
		}}}},
	})
}
