// Package collectors finds the collector pods the targets are allocated to: the pods matching
// collector_selector in collector_namespace, scheduled on a node, and not stuck unready for
// longer than collector_not_ready_grace_period. The informer keeps only what allocation needs
// of each pod (name, node, phase, start time, Ready condition), so memory stays small however
// large the pod specs are.
package collectors

import (
	"context"
	"log/slog"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/targetallocator/watchloop"
)

// Watcher watches collector pods and reports the set of usable collectors.
type Watcher struct {
	// Client reads pods.
	Client kubernetes.Interface
	// Namespace and Selector select the collector pods.
	Namespace string
	Selector  *metav1.LabelSelector
	// GracePeriod: a pod not Running, or not Ready, for longer than this is left out; zero
	// keeps every scheduled pod.
	GracePeriod time.Duration
	// MinInterval bounds how often OnChange is called (default 5s, as upstream).
	MinInterval time.Duration
	// OnChange receives the usable collectors, sorted by name.
	OnChange func([]allocation.Collector)
	// Log, optional.
	Log *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Run watches until ctx ends. It returns an error only for an invalid selector.
func (w *Watcher) Run(ctx context.Context) error {
	sel, err := metav1.LabelSelectorAsSelector(w.Selector)
	if err != nil {
		return err
	}
	if w.Selector == nil {
		sel = labels.Nothing()
	}
	interval := w.MinInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	factory := informers.NewSharedInformerFactoryWithOptions(w.Client, 0,
		informers.WithNamespace(w.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel.String() }))
	inf := factory.Core().V1().Pods().Informer()
	if err := inf.SetTransform(strip); err != nil {
		return err
	}
	changes := watchloop.New()
	if err := changes.Start(ctx, inf); err != nil {
		return err
	}
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	// The grace period expires without any event: re-evaluate at least that often.
	recheck := watchloop.Every{Interval: max(interval, w.GracePeriod/2+time.Second), Check: watchloop.Always}
	changes.Loop(ctx, interval, func() { w.report(inf.GetStore()) }, recheck)
	return nil
}

func (w *Watcher) report(store cache.Store) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	var out []allocation.Collector
	for _, obj := range store.List() {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		if Unhealthy(pod, w.GracePeriod, now()) {
			continue
		}
		out = append(out, allocation.Collector{Name: pod.Name, NodeName: pod.Spec.NodeName})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if w.Log != nil {
		w.Log.Debug("collectors", "count", len(out))
	}
	w.OnChange(out)
}

// Unhealthy tells whether pod has been not Running (since it started) or not Ready (since the
// condition changed) for longer than grace; a zero grace disables the check, as upstream's.
func Unhealthy(pod *corev1.Pod, grace time.Duration, now time.Time) bool {
	if grace == 0 {
		return false
	}
	if pod.Status.Phase != corev1.PodRunning && pod.Status.StartTime != nil && now.Sub(pod.Status.StartTime.Time) > grace {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue && now.Sub(c.LastTransitionTime.Time) > grace {
			return true
		}
	}
	return false
}

// strip keeps only what allocation reads of a pod.
func strip(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, ResourceVersion: pod.ResourceVersion,
			DeletionTimestamp: pod.DeletionTimestamp},
		Spec:   corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, StartTime: pod.Status.StartTime},
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return out, nil
}
