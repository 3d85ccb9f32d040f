package instrumentation

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/inject"
	inst "github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/sidecar"
)

// The sidecar path of the catch-up controller (Reconciler.Sidecars): the same scan, summary and
// bounded restarts as for Instrumentations, where what a workload's pods should carry is the
// current generation of the sidecar collector they ask for (sidecar.opentelemetry.io/inject on
// the pod template or the namespace) and what a pod carries is sidecar.GenerationAnnotation,
// which the pod webhook stamps when it injects the sidecar.

// SidecarRestartedForAnnotation is RestartedForAnnotation for sidecar restarts: the sidecar
// record ("sidecar=<ns>/<name>@<generation>") a restart was for. It is its own annotation so
// that a workload that asks for both an Instrumentation and a sidecar keeps one record per path
// and the two paths never undo each other's record (which could restart it forever).
const SidecarRestartedForAnnotation = "otelop.io/sidecar-restarted-for"

// Event reasons on sidecar collectors.
const (
	EventSidecarsOutdated = "SidecarsOutdated"
	EventSidecarsCurrent  = "SidecarsCurrent"
)

// sidecarLanguage stands for the sidecar in a Workload's Want (the Injected "language").
const sidecarLanguage inst.Language = "sidecar"

// NewSidecarIndex indexes the sidecar-mode collectors of list (others are left out: the webhook
// injects only sidecar-mode collectors).
func NewSidecarIndex(list []v1beta1.OpenTelemetryCollector) Index {
	ix := Index{}
	for _, c := range list {
		if c.Spec.Mode != v1beta1.ModeSidecar {
			continue
		}
		if ix[c.Namespace] == nil {
			ix[c.Namespace] = map[string]IndexEntry{}
		}
		ix[c.Namespace][c.Name] = IndexEntry{Generation: c.Generation, Allowed: c.Annotations[sidecar.AllowedNamespacesAnnotation]}
	}
	return ix
}

// ResolveSidecar returns the sidecar collector that value (sidecar.InjectAnnotation, the pod's
// or else its namespace's) names for a pod of ns, as the pod webhook resolves it: "true" is the
// only sidecar collector of ns; a name or namespace/name must exist and allow ns.
func (ix Index) ResolveSidecar(value, ns string) (key types.NamespacedName, generation int64, ok bool) {
	switch {
	case value == "" || inject.IsFalse(value):
		return key, 0, false
	case inject.IsTrue(value):
		if len(ix[ns]) != 1 {
			return key, 0, false
		}
		for name, e := range ix[ns] {
			return types.NamespacedName{Namespace: ns, Name: name}, e.Generation, true
		}
	}
	key, err := inject.Target(sidecar.InjectAnnotation, value, ns)
	if err != nil {
		return key, 0, false
	}
	e, ok := ix[key.Namespace][key.Name]
	if !ok || !inject.AllowsNamespace(key.Namespace, e.Allowed, ns) {
		return key, 0, false
	}
	return key, e.Generation, true
}

// sidecarView returns the view of the workloads that ask for a sidecar collector of ix.
func sidecarView(nsAnn map[string]string, ix Index) view {
	return func(kind string, meta *metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec) *Workload {
		if meta.DeletionTimestamp != nil {
			return nil
		}
		value := inject.Resolve(tmpl.Annotations[sidecar.InjectAnnotation], nsAnn[sidecar.InjectAnnotation])
		key, gen, ok := ix.ResolveSidecar(value, meta.Namespace)
		if !ok {
			return nil
		}
		want := []inst.Injected{{Language: sidecarLanguage, Instrumentation: key, Generation: gen}}
		return newWorkload(kind, meta, tmpl, want, SidecarRestartedForAnnotation, sidecarRecord)
	}
}

// sidecarRecord reads the sidecar a pod carries; a pod without a readable
// sidecar.GenerationAnnotation carries none.
func sidecarRecord(podAnn map[string]string) []inst.Injected {
	key, gen, ok := sidecar.ParseGeneration(podAnn[sidecar.GenerationAnnotation])
	if !ok {
		return nil
	}
	return []inst.Injected{{Language: sidecarLanguage, Instrumentation: key, Generation: gen}}
}

// reconcileSidecars is Reconcile for sidecar collectors.
func (r *Reconciler) reconcileSidecars(ctx context.Context) (ctrl.Result, error) {
	r.lastScan.Store(time.Now().UnixNano())
	all, err := r.sidecarCollectors(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var items []v1beta1.OpenTelemetryCollector
	for _, c := range all {
		if r.inShard(&c) {
			items = append(items, c)
		}
	}
	if len(items) == 0 {
		outdatedSidecarWorkloads.Set(0)
		return ctrl.Result{}, nil // the next sidecar collector to be created queues a scan
	}
	keys := make([]types.NamespacedName, 0, len(items))
	for _, c := range items {
		keys = append(keys, types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
	}
	ix := NewSidecarIndex(all)
	allowsOthers := false
	for _, c := range all {
		allowsOthers = allowsOthers || c.Annotations[sidecar.AllowedNamespacesAnnotation] != ""
	}
	stats := &Stats{}
	nss, err := r.Scanner.namespacesWhere(ctx, r.Namespaces, stats, func(name string, ann map[string]string) bool {
		_, ok := ix[name]
		return ok || allowsOthers || ann[sidecar.InjectAnnotation] != ""
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	var workloads []*Workload
	for ns, ann := range nss {
		ws, err := r.Scanner.namespaceWith(ctx, ns, sidecarView(ann, ix), stats)
		if err != nil {
			return ctrl.Result{}, err
		}
		workloads = append(workloads, ws...)
	}
	sums := Summarize(keys, workloads)
	total := 0
	for _, s := range sums {
		total += len(s.Pending)
	}
	outdatedSidecarWorkloads.Set(float64(total))
	errs := r.writeSidecarStatuses(ctx, items, keys, sums)
	byKey := map[types.NamespacedName]*v1beta1.OpenTelemetryCollector{}
	for i := range all {
		byKey[types.NamespacedName{Namespace: all[i].Namespace, Name: all[i].Name}] = &all[i]
	}
	for i := range items {
		byKey[keys[i]] = &items[i] // the copies writeSidecarStatuses updated
	}
	optIn := func(w *Workload, k types.NamespacedName) bool {
		c := byKey[k]
		return c != nil && r.optInFor(w, c)
	}
	regarding := func(k types.NamespacedName) client.Object {
		if c := byKey[k]; c != nil && r.inShard(c) {
			return c
		}
		return nil
	}
	result := ctrl.Result{RequeueAfter: r.Interval}
	errs = append(errs, r.restartWorkloads(ctx, workloads, optIn, regarding, &result)...)
	if len(errs) > 0 {
		return ctrl.Result{}, fmt.Errorf("%v", errs)
	}
	return result, nil
}

// sidecarCollectors returns every live sidecar-mode collector of the namespaces scanned, whatever
// its shard (uncached with a shard, as for Instrumentations).
func (r *Reconciler) sidecarCollectors(ctx context.Context) ([]v1beta1.OpenTelemetryCollector, error) {
	var all []v1beta1.OpenTelemetryCollector
	list := &v1beta1.OpenTelemetryCollectorList{}
	if !r.sharded() {
		if err := r.Client.List(ctx, list); err != nil {
			return nil, err
		}
		all = list.Items
	} else {
		nss := r.Namespaces
		if len(nss) == 0 {
			nss = []string{""}
		}
		for _, ns := range nss {
			if err := r.Scanner.list(ctx, list, ns, &Stats{}, func() { all = append(all, list.Items...) }); err != nil {
				return nil, fmt.Errorf("listing collectors: %w", err)
			}
		}
	}
	return slices.DeleteFunc(all, func(c v1beta1.OpenTelemetryCollector) bool {
		return c.Spec.Mode != v1beta1.ModeSidecar || c.DeletionTimestamp != nil ||
			(len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, c.Namespace))
	}), nil
}

// writeSidecarStatuses patches status.sidecars of every collector whose workloads changed, with an
// Event on a transition.
func (r *Reconciler) writeSidecarStatuses(ctx context.Context, items []v1beta1.OpenTelemetryCollector, keys []types.NamespacedName, sums map[types.NamespacedName]*Summary) []error {
	var errs []error
	for i := range items {
		c := &items[i]
		want := SidecarStatus(sums[keys[i]])
		if equality.Semantic.DeepEqual(c.Status.Sidecars, want) {
			continue
		}
		ev := SidecarTransition(c.Status.Sidecars, want)
		patch := client.MergeFrom(c.DeepCopy())
		c.Status.Sidecars = want
		if err := r.Client.Status().Patch(ctx, c, patch); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("writing the status of OpenTelemetryCollector %s: %w", keys[i], err))
			}
			continue
		}
		ctrl.LoggerFrom(ctx).Info("sidecars", "collector", keys[i].String(), "current", want.Current, "outdated", want.Outdated)
		if ev != nil {
			r.Recorder.Eventf(c, nil, ev.Type, ev.Reason, "Scan", "%s", ev.Note)
		}
	}
	return errs
}

// SidecarStatus returns the status.sidecars a summary stands for, with at most MaxPendingNames
// names.
func SidecarStatus(s *Summary) *v1beta1.SidecarWorkloads {
	st := s.Status()
	out := &v1beta1.SidecarWorkloads{Current: st.Instrumented, Outdated: st.Pending}
	for _, p := range st.PendingWorkloads {
		out.OutdatedWorkloads = append(out.OutdatedWorkloads, v1beta1.OutdatedWorkload(p))
	}
	return out
}

// SidecarTransition is Transition for status.sidecars: a Warning when workloads become outdated
// (more of them, or one not named before), a Normal one when none is outdated any more.
func SidecarTransition(old, new *v1beta1.SidecarWorkloads) *Event {
	ev := Transition(asWorkloads(old), asWorkloads(new))
	switch {
	case ev == nil:
		return nil
	case ev.Reason == EventWorkloadsInstrumented:
		return &Event{Type: "Normal", Reason: EventSidecarsCurrent,
			Note: fmt.Sprintf("No workload runs an outdated or missing sidecar any more; %d current", new.Current)}
	}
	names := make([]string, 0, len(new.OutdatedWorkloads))
	for _, p := range new.OutdatedWorkloads {
		names = append(names, workloadName(p.Kind, p.Namespace, p.Name, p.Reason))
	}
	note := workloadsNote(new.Outdated, names, "this sidecar", "without its current generation", "collector")
	return &Event{Type: "Warning", Reason: EventSidecarsOutdated, Note: note}
}

func asWorkloads(s *v1beta1.SidecarWorkloads) *v1alpha1.InstrumentationWorkloads {
	if s == nil {
		return nil
	}
	out := &v1alpha1.InstrumentationWorkloads{Instrumented: s.Current, Pending: s.Outdated}
	for _, p := range s.OutdatedWorkloads {
		out.PendingWorkloads = append(out.PendingWorkloads, v1alpha1.PendingWorkload(p))
	}
	return out
}
