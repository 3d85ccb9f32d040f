package instrumentation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1alpha1"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// observed returns a workload of appsA (generation 3) with one pod carrying rec (nil: none).
func observed(kind, ns, name string, rec map[string]string) *Workload {
	w := &Workload{Kind: kind, Namespace: ns, Name: name, UID: types.UID(name),
		Want:    []inst.Injected{{Language: inst.Java, Instrumentation: appsA, Generation: 3}},
		tallies: map[types.NamespacedName]*tally{}}
	w.Observe(rec, "")
	return w
}

var good = record(inst.Injected{Language: inst.Java, Instrumentation: appsA, Generation: 3})

func TestSummarizeSortsAndBounds(t *testing.T) {
	g := NewWithT(t)
	var ws []*Workload
	for i := 14; i >= 0; i-- {
		ws = append(ws, observed(KindDeployment, fmt.Sprintf("ns-%02d", i%3), fmt.Sprintf("web-%02d", i), nil))
	}
	ws = append(ws, observed(KindStatefulSet, "ns-00", "db", good), observed(KindDaemonSet, "ns-00", "agent", nil))
	sums := Summarize([]types.NamespacedName{appsA, appsB}, ws)
	g.Expect(sums[appsB]).To(Equal(&Summary{}), "an Instrumentation without workloads gets zero counts")
	st := sums[appsA].Status()
	g.Expect(st.Instrumented).To(Equal(int32(1)))
	g.Expect(st.Pending).To(Equal(int32(16)))
	g.Expect(st.PendingWorkloads).To(HaveLen(MaxPendingNames))
	g.Expect(st.PendingWorkloads[0]).To(Equal(v1alpha1.PendingWorkload{Kind: KindDaemonSet, Namespace: "ns-00", Name: "agent", Reason: ReasonNotInjected}))
	g.Expect(st.PendingWorkloads[1].Name).To(Equal("web-00"))
	g.Expect(st.PendingWorkloads[MaxPendingNames-1].Namespace).To(Equal("ns-01"))
	g.Expect(sums[appsB].Status()).To(Equal(&v1alpha1.InstrumentationWorkloads{}))
}

func TestTransition(t *testing.T) {
	web := v1alpha1.PendingWorkload{Kind: KindDeployment, Namespace: "apps", Name: "web", Reason: ReasonNotInjected}
	db := v1alpha1.PendingWorkload{Kind: KindStatefulSet, Namespace: "apps", Name: "db", Reason: ReasonNotInjected}
	st := func(instrumented, pending int32, names ...v1alpha1.PendingWorkload) *v1alpha1.InstrumentationWorkloads {
		return &v1alpha1.InstrumentationWorkloads{Instrumented: instrumented, Pending: pending, PendingWorkloads: names}
	}
	cases := []struct {
		name     string
		old, new *v1alpha1.InstrumentationWorkloads
		reason   string
	}{
		{"first status with nothing pending", nil, st(2, 0), ""},
		{"first status with a pending workload", nil, st(0, 1, web), EventWorkloadsPending},
		{"one more pending", st(0, 1, web), st(0, 2, db, web), EventWorkloadsPending},
		{"a different one pending", st(0, 1, web), st(0, 1, db), EventWorkloadsPending},
		{"the same pending, reason changed", st(0, 1, web), st(0, 1, v1alpha1.PendingWorkload{Kind: KindDeployment, Namespace: "apps", Name: "web", Reason: ReasonRollingOut}), ""},
		{"fewer pending", st(0, 2, db, web), st(1, 1, web), ""},
		{"none pending any more", st(0, 2, db, web), st(2, 0), EventWorkloadsInstrumented},
		{"only instrumented counts changed", st(1, 0), st(2, 0), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			ev := Transition(c.old, c.new)
			if c.reason == "" {
				g.Expect(ev).To(BeNil())
				return
			}
			g.Expect(ev).NotTo(BeNil())
			g.Expect(ev.Reason).To(Equal(c.reason))
		})
	}
}

func TestPendingNoteIsBounded(t *testing.T) {
	g := NewWithT(t)
	st := &v1alpha1.InstrumentationWorkloads{Pending: 250}
	for i := range MaxPendingNames {
		st.PendingWorkloads = append(st.PendingWorkloads, v1alpha1.PendingWorkload{Kind: KindDeployment,
			Namespace: strings.Repeat("n", 63), Name: fmt.Sprintf("%s-%d", strings.Repeat("w", 60), i), Reason: ReasonNotInjected})
	}
	note := pendingNote(st)
	g.Expect(len(note)).To(BeNumerically("<=", 1000))
	g.Expect(note).To(HavePrefix("250 workload(s)"))
	g.Expect(pendingNote(&v1alpha1.InstrumentationWorkloads{Pending: 12, PendingWorkloads: st.PendingWorkloads[:1]})).To(ContainSubstring("and 11 more"))
}

func TestRestartCandidates(t *testing.T) {
	g := NewWithT(t)
	missing := observed(KindDeployment, "apps", "web", nil)
	outdated := observed(KindDeployment, "apps", "api", record(inst.Injected{Language: inst.Java, Instrumentation: appsA, Generation: 2}))
	fine := observed(KindDeployment, "apps", "ok", good)
	rolling := observed(KindDeployment, "apps", "rolling", nil)
	rolling.RollingOut = true
	paused := observed(KindDeployment, "apps", "paused", nil)
	paused.NoRestart = "paused"
	done := observed(KindDeployment, "apps", "done", nil)
	done.RestartedFor = done.Record()
	otherInstr := &Workload{Kind: KindDeployment, Namespace: "apps", Name: "other", UID: "other",
		Want: []inst.Injected{{Language: inst.Java, Instrumentation: appsB, Generation: 1}}, tallies: map[types.NamespacedName]*tally{}}
	otherInstr.Observe(nil, "")
	all := []*Workload{missing, outdated, fine, rolling, paused, done, otherInstr}

	got := RestartCandidates(all, func(_ *Workload, k types.NamespacedName) bool { return k == appsA })
	names := []string{}
	for _, w := range got {
		names = append(names, w.Name)
	}
	g.Expect(names).To(Equal([]string{"api", "web"}))
	g.Expect(RestartCandidates(all, func(*Workload, types.NamespacedName) bool { return false })).To(BeEmpty(), "no opt-in, no restart")

	patch, err := RestartPatch(missing, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(patch)).To(Equal(`{"metadata":{"uid":"web"},"spec":{"template":{"metadata":{"annotations":{` +
		`"kubectl.kubernetes.io/restartedAt":"2026-12-01T10:00:00Z","otelop.io/restarted-for":"java=apps/a@3"}}}}}`))
}

// TestRestartFor: the restart of a workload that asks for two Instrumentations falls to the first
// one (by language) that it is pending for and that opts in, the same one whichever shard asks.
func TestRestartFor(t *testing.T) {
	g := NewWithT(t)
	w := &Workload{Kind: KindDeployment, Namespace: "apps", Name: "web", UID: "web",
		Want: []inst.Injected{{Language: inst.Java, Instrumentation: appsA, Generation: 1},
			{Language: inst.Python, Instrumentation: appsB, Generation: 1}},
		tallies: map[types.NamespacedName]*tally{}}
	w.Observe(record(inst.Injected{Language: inst.Python, Instrumentation: appsB, Generation: 1}), "")
	all := func(*Workload, types.NamespacedName) bool { return true }
	only := func(k types.NamespacedName) func(*Workload, types.NamespacedName) bool {
		return func(_ *Workload, key types.NamespacedName) bool { return key == k }
	}
	key, ok := w.RestartFor(all)
	g.Expect(ok).To(BeTrue())
	g.Expect(key).To(Equal(appsA), "java is pending (python is injected)")
	_, ok = w.RestartFor(only(appsB))
	g.Expect(ok).To(BeFalse(), "python is injected: a restart is not b's to make")

	w.tallies = map[types.NamespacedName]*tally{}
	w.Observe(nil, "") // neither injected
	key, _ = w.RestartFor(all)
	g.Expect(key).To(Equal(appsA), "the first by language")
	key, _ = w.RestartFor(only(appsB))
	g.Expect(key).To(Equal(appsB), "the first that opts in")
}
