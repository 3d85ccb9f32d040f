package instrumentation

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1alpha1"
)

// MaxPendingNames bounds status.workloads.pendingWorkloads.
const MaxPendingNames = 10

// Summary is what the scan found for one Instrumentation.
type Summary struct {
	Instrumented int
	// Pending lists every pending workload (the status keeps the first MaxPendingNames).
	Pending []v1alpha1.PendingWorkload
}

// Summarize returns a Summary for every key (Instrumentations without workloads get an empty
// one) from the workloads' verdicts. Verdicts for keys not listed are dropped.
func Summarize(keys []types.NamespacedName, workloads []*Workload) map[types.NamespacedName]*Summary {
	out := make(map[types.NamespacedName]*Summary, len(keys))
	for _, k := range keys {
		out[k] = &Summary{}
	}
	for _, w := range workloads {
		for key, reason := range w.Verdicts() {
			s := out[key]
			switch {
			case s == nil:
			case reason == "":
				s.Instrumented++
			default:
				p := w.Ref()
				p.Reason = reason
				s.Pending = append(s.Pending, p)
			}
		}
	}
	for _, s := range out {
		slices.SortFunc(s.Pending, comparePending)
	}
	return out
}

func comparePending(a, b v1alpha1.PendingWorkload) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// Status returns the status.workloads the summary stands for, with at most MaxPendingNames names.
func (s *Summary) Status() *v1alpha1.InstrumentationWorkloads {
	st := &v1alpha1.InstrumentationWorkloads{Instrumented: int32(s.Instrumented), Pending: int32(len(s.Pending))}
	if len(s.Pending) > 0 {
		st.PendingWorkloads = slices.Clone(s.Pending[:min(len(s.Pending), MaxPendingNames)])
	}
	return st
}

// Event is an Event to emit on an Instrumentation.
type Event struct {
	Type, Reason, Note string
}

// Event reasons on the Instrumentation.
const (
	EventWorkloadsPending      = "WorkloadsPending"
	EventWorkloadsInstrumented = "WorkloadsInstrumented"
	EventWorkloadRestarted     = "WorkloadRestarted"
	EventRestartFailed         = "WorkloadRestartFailed"
)

// Transition returns the Event for a change of status.workloads from old to new, or nil: a
// Warning when workloads become pending (more of them, or one not named before), a Normal one
// when none is pending any more. Anything else (counts of instrumented workloads, fewer pending
// ones) is visible in the status only.
func Transition(old, new *v1alpha1.InstrumentationWorkloads) *Event {
	if new == nil {
		return nil
	}
	var oldPending int32
	var oldNames []v1alpha1.PendingWorkload
	if old != nil {
		oldPending, oldNames = old.Pending, old.PendingWorkloads
	}
	if new.Pending == 0 {
		if oldPending > 0 {
			return &Event{Type: "Normal", Reason: EventWorkloadsInstrumented,
				Note: fmt.Sprintf("No workload is pending any more; %d instrumented", new.Instrumented)}
		}
		return nil
	}
	newName := false
	for _, p := range new.PendingWorkloads {
		if !slices.ContainsFunc(oldNames, func(o v1alpha1.PendingWorkload) bool { return sameWorkload(o, p) }) {
			newName = true
			break
		}
	}
	if new.Pending <= oldPending && !newName {
		return nil
	}
	return &Event{Type: "Warning", Reason: EventWorkloadsPending, Note: pendingNote(new)}
}

func sameWorkload(a, b v1alpha1.PendingWorkload) bool {
	return a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// pendingNote says which workloads are pending and what to do about it.
func pendingNote(st *v1alpha1.InstrumentationWorkloads) string {
	names := make([]string, 0, len(st.PendingWorkloads))
	for _, p := range st.PendingWorkloads {
		names = append(names, workloadName(p.Kind, p.Namespace, p.Name, p.Reason))
	}
	return workloadsNote(st.Pending, names, "this instrumentation", "admitted without it", "Instrumentation")
}

// workloadName is how an Event note names a workload.
func workloadName(kind, namespace, name, reason string) string {
	return fmt.Sprintf("%s %s/%s (%s)", kind, namespace, name, reason)
}

// workloadsNote is the Warning note for total workloads that ask for what but run pods lacking
// it, naming the first (names) and how to restart them (annotating the owner kind). Event notes
// are at most 1 KB.
func workloadsNote(total int32, names []string, what, lacking, owner string) string {
	more := ""
	if n := int(total) - len(names); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	note := fmt.Sprintf("%d workload(s) ask for %s but run pods %s: %s%s. "+
		"Restart them (kubectl rollout restart), or annotate this %s %s=true to let the operator do it",
		total, what, lacking, strings.Join(names, ", "), more, owner, RestartOptInAnnotation)
	if len(note) > 1000 {
		note = note[:997] + "..."
	}
	return note
}

// RestartCandidates returns, in a stable order, the workloads a restart would instrument and that
// may be restarted now: pending (not rolling out) for an Instrumentation for which optIn is true,
// restartable by a template patch, and not restarted for their current record already.
func RestartCandidates(workloads []*Workload, optIn func(*Workload, types.NamespacedName) bool) []*Workload {
	var out []*Workload
	for _, w := range workloads {
		if w.RollingOut || w.NoRestart != "" || w.RestartedFor == w.Record() {
			continue
		}
		if _, ok := w.RestartFor(optIn); ok {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *Workload) int { return comparePending(a.Ref(), b.Ref()) })
	return out
}

// RestartFor returns the Instrumentation a restart of w falls to: the first, in w.Want's
// (language) order, for which w is pending in a way a restart fixes and optIn is true. Every
// instance computes the same one from the same Instrumentations, so with --shard only the shard
// of that Instrumentation restarts w.
func (w *Workload) RestartFor(optIn func(*Workload, types.NamespacedName) bool) (types.NamespacedName, bool) {
	verdicts := w.Verdicts()
	for _, want := range w.Want {
		reason := verdicts[want.Instrumentation]
		if (reason == ReasonNotInjected || reason == ReasonOutdated) && optIn(w, want.Instrumentation) {
			return want.Instrumentation, true
		}
	}
	return types.NamespacedName{}, false
}
