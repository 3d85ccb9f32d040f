package instrumentation

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	inst "github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/sidecar"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "instrumentation-catchup"

// Defaults of Options.
const (
	DefaultInterval          = time.Minute
	DefaultRestartsPerMinute = 10
	// DefaultCoalesce is the least time between two scans that Instrumentation changes start.
	DefaultCoalesce = 5 * time.Second
)

// Options configure SetupWithManager.
type Options struct {
	// Interval between scans (default DefaultInterval).
	Interval time.Duration
	// Coalesce is the least time from one scan's start to the next scan an Instrumentation change
	// starts (default DefaultCoalesce): changes within it wait, and one scan covers them all.
	Coalesce time.Duration
	// Name of the controller (default ControllerName), for tests that run several.
	Name string
	// RestartPendingWorkloads restarts the pending workloads of every Instrumentation not
	// annotated otelop.io/restart-pending-workloads=false.
	RestartPendingWorkloads bool
	// RestartsPerMinute bounds restarts over all Instrumentations (default
	// DefaultRestartsPerMinute; negative: none).
	RestartsPerMinute int
	// PageSize of the uncached list requests (default DefaultPageSize).
	PageSize int64
	// Enabled filters the languages the pod webhook injects (nil: all).
	Enabled func(inst.Language) bool
	// Namespaces, when not empty, restricts the scan (--watch-namespace).
	Namespaces []string
	// SkipNameValidation lets tests register the controller in several managers.
	SkipNameValidation bool
	// Shard, when not nil, restricts the controller to Instrumentations it matches (--shard).
	Shard labels.Selector
}

// scanKey is the one request the controller queues.
var scanKey = reconcile.Request{NamespacedName: client.ObjectKey{Name: "scan"}}

// SetupWithManager registers the catch-up controller: a scan on start, every Interval, and after
// an Instrumentation is created, deleted or changed in what the scan reads of it (scanInput),
// at most one such scan per Coalesce. Its sidecar path is a second controller, Name+"-sidecars",
// that follows sidecar-mode OpenTelemetryCollectors the same way and shares the restart Limiter. It reads user workloads and pods with the manager's
// uncached APIReader, never through an informer.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Coalesce <= 0 {
		opts.Coalesce = DefaultCoalesce
	}
	if opts.Name == "" {
		opts.Name = ControllerName
	}
	if opts.RestartsPerMinute == 0 {
		opts.RestartsPerMinute = DefaultRestartsPerMinute
	}
	var namespaces []string
	for _, ns := range opts.Namespaces {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	apps, err := NewAppsREST(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	r := &Reconciler{
		Client:     mgr.GetClient(),
		Scanner:    Scanner{Reader: mgr.GetAPIReader(), Apps: apps, PageSize: opts.PageSize, Enabled: opts.Enabled},
		Recorder:   mgr.GetEventRecorder("opentelemetry-operator"),
		Interval:   opts.Interval,
		RestartAll: opts.RestartPendingWorkloads,
		Limiter:    NewLimiter(opts.RestartsPerMinute),
		Namespaces: namespaces,
		Shard:      opts.Shard,
	}
	copts := controller.Options{MaxConcurrentReconciles: 1}
	if opts.SkipNameValidation {
		t := true
		copts.SkipNameValidation = &t
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(opts.Name).
		Watches(&v1alpha1.Instrumentation{}, r.coalesced(opts.Coalesce), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return r.scanInput(e.ObjectOld) != r.scanInput(e.ObjectNew) },
		})).
		WithOptions(copts).
		Complete(r)
	if err != nil {
		return err
	}
	// The sidecar path: its own queue and scans, the same rate limit.
	sr := &Reconciler{Client: r.Client, Scanner: r.Scanner, Recorder: r.Recorder, Interval: r.Interval, RestartAll: r.RestartAll,
		Limiter: r.Limiter, Namespaces: r.Namespaces, Shard: r.Shard, Sidecars: true}
	sidecarMode := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		c, ok := obj.(*v1beta1.OpenTelemetryCollector)
		return ok && c.Spec.Mode == v1beta1.ModeSidecar
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(opts.Name+"-sidecars").
		Watches(&v1beta1.OpenTelemetryCollector{}, sr.coalesced(opts.Coalesce), builder.WithPredicates(sidecarMode, predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return sr.scanInput(e.ObjectOld) != sr.scanInput(e.ObjectNew) },
		})).
		WithOptions(copts).
		Complete(sr)
}

// input is what a scan reads of an Instrumentation or a sidecar collector; a change of anything
// else (status, other annotations and labels, managedFields) does not change the outcome and
// starts no scan.
type input struct {
	generation                         int64
	allowed, allowedPods, restartOptIn string
	inShard, deleting                  bool
}

func (r *Reconciler) scanInput(obj client.Object) input {
	ann := obj.GetAnnotations()
	return input{
		generation:   obj.GetGeneration(),
		allowed:      ann[inst.AllowedNamespacesAnnotation],
		allowedPods:  ann[sidecar.AllowedNamespacesAnnotation],
		restartOptIn: ann[RestartOptInAnnotation],
		inShard:      !r.sharded() || r.Shard.Matches(labels.Set(obj.GetLabels())),
		deleting:     obj.GetDeletionTimestamp() != nil,
	}
}

// coalesced queues the scan for every event it gets, no sooner than window after the last scan
// started: a burst of changes costs one scan now and at most one per window after it, each
// covering every change before it.
func (r *Reconciler) coalesced(window time.Duration) handler.EventHandler {
	queue := func(q requests) {
		wait := time.Duration(0)
		if last := r.lastScan.Load(); last != 0 {
			wait = time.Until(time.Unix(0, last).Add(window))
		}
		if wait > 0 {
			q.AddAfter(scanKey, wait)
		} else {
			q.Add(scanKey)
		}
	}
	return handler.Funcs{
		CreateFunc:  func(_ context.Context, _ event.CreateEvent, q requests) { queue(q) },
		UpdateFunc:  func(_ context.Context, _ event.UpdateEvent, q requests) { queue(q) },
		DeleteFunc:  func(_ context.Context, _ event.DeleteEvent, q requests) { queue(q) },
		GenericFunc: func(_ context.Context, _ event.GenericEvent, q requests) { queue(q) },
	}
}

// requests is the controller's queue.
type requests = workqueue.TypedRateLimitingInterface[reconcile.Request]
