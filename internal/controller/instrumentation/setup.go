package instrumentation

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "instrumentation-catchup"

// Defaults of Options.
const (
	DefaultInterval          = time.Minute
	DefaultRestartsPerMinute = 10
)

// Options configure SetupWithManager.
type Options struct {
	// Interval between scans (default DefaultInterval).
	Interval time.Duration
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

// SetupWithManager registers the catch-up controller: a scan on start, on every Instrumentation
// created, deleted or changed (spec or annotations; not status), and every Interval. It reads
// user workloads and pods with the manager's uncached APIReader, never through an informer.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
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
	r := &Reconciler{
		Client:     mgr.GetClient(),
		Scanner:    Scanner{Reader: mgr.GetAPIReader(), PageSize: opts.PageSize, Enabled: opts.Enabled},
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
	toScan := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{scanKey}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&v1alpha1.Instrumentation{}, toScan, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(copts).
		Complete(r)
}
