package allocation

import (
	"fmt"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/otelop/otelop/internal/targetallocator/target"
)

func items(n, nodes int) []*target.Item {
	out := make([]*target.Item, n)
	for i := range out {
		l := labels.FromStrings("__address__", fmt.Sprintf("10.0.%d.%d:8080", i/250, i%250),
			"__meta_kubernetes_pod_node_name", fmt.Sprintf("node-%d", i%nodes))
		out[i] = target.NewItem(fmt.Sprintf("job-%d", i%7), l, uint64(i+1))
	}
	return out
}

func collectors(n int) []Collector {
	out := make([]Collector, n)
	for i := range out {
		out[i] = Collector{Name: fmt.Sprintf("collector-%d", i), NodeName: fmt.Sprintf("node-%d", i)}
	}
	return out
}

type recorder struct{ moved map[string]int }

func (r *recorder) Moved(reason string, n int)   { r.moved[reason] += n }
func (r *recorder) Assigned(map[string]int, int) {}

func assignment(a *Allocator, its []*target.Item) map[uint64]string {
	out := make(map[uint64]string, len(its))
	for _, it := range its {
		out[it.ID] = it.Collector
	}
	return out
}

func movedShare(before, after map[uint64]string) float64 {
	moved := 0
	for id, c := range before {
		if after[id] != c {
			moved++
		}
	}
	return float64(moved) / float64(len(before))
}

func checkIndex(t *testing.T, a *Allocator) {
	t.Helper()
	total := 0
	for _, c := range a.Collectors() {
		for _, j := range []string{"job-0", "job-1", "job-2", "job-3", "job-4", "job-5", "job-6"} {
			for _, it := range a.Targets(c.Name, j) {
				if it.Collector != c.Name {
					t.Fatalf("target %d indexed under %s but says %s", it.ID, c.Name, it.Collector)
				}
				total++
			}
		}
	}
	_, unassigned := a.Counts()
	if total+unassigned != a.Len() {
		t.Fatalf("indexed %d + unassigned %d != %d targets", total, unassigned, a.Len())
	}
}

// Balance bound: consistent-hashing (rendezvous) puts at most 10% more than the mean on any
// collector for 10,000 targets over 10 collectors; least-weighted at most one more than the
// least loaded one. Stability: adding an 11th collector moves at most 1.5/(n+1) of the targets
// with consistent-hashing (expected 1/(n+1)), exactly the new collector's fair share with
// least-weighted; removing one moves only that collector's targets.
func TestStrategyBalanceAndStability(t *testing.T) {
	const n, m = 10, 10000
	for _, strategy := range []string{ConsistentHashing, LeastWeighted} {
		t.Run(strategy, func(t *testing.T) {
			rec := &recorder{moved: map[string]int{}}
			a, err := New(strategy, "", rec)
			if err != nil {
				t.Fatal(err)
			}
			its := items(m, n)
			a.Apply(its, nil) // no collectors yet: all unassigned
			if _, u := a.Counts(); u != m {
				t.Fatalf("unassigned = %d, want %d", u, m)
			}
			a.SetCollectors(collectors(n))
			checkIndex(t, a)
			per, u := a.Counts()
			if u != 0 {
				t.Fatalf("unassigned = %d", u)
			}
			lo, hi := m, 0
			for _, c := range per {
				lo, hi = min(lo, c), max(hi, c)
			}
			switch strategy {
			case ConsistentHashing:
				if float64(hi) > 1.1*m/n {
					t.Errorf("max load %d > 1.1 x mean %d", hi, m/n)
				}
			case LeastWeighted:
				if hi-lo > 1 {
					t.Errorf("loads %d..%d differ by more than one", lo, hi)
				}
			}
			before := assignment(a, its)
			a.SetCollectors(collectors(n + 1))
			checkIndex(t, a)
			after := assignment(a, its)
			share := movedShare(before, after)
			t.Logf("%s: add 1 to %d collectors moved %.3f of targets (ideal %.3f)", strategy, n, share, 1.0/(n+1))
			switch strategy {
			case ConsistentHashing:
				if share > 1.5/(n+1) {
					t.Errorf("moved %.3f > %.3f", share, 1.5/(n+1))
				}
			case LeastWeighted:
				if want := m / (n + 1); share*m > float64(want+1) {
					t.Errorf("moved %.0f targets, want at most %d", share*m, want+1)
				}
				per, _ := a.Counts()
				lo, hi := m, 0
				for _, c := range per {
					lo, hi = min(lo, c), max(hi, c)
				}
				if hi-lo > 1 {
					t.Errorf("after adding: loads %d..%d", lo, hi)
				}
			}
			for id, c := range after {
				if before[id] != c && c != "collector-10" {
					t.Fatalf("target %d moved %s -> %s, not to the new collector", id, before[id], c)
				}
			}
			// Remove collector-3: only its targets move.
			before = after
			cs := collectors(n + 1)
			cs = append(cs[:3], cs[4:]...)
			a.SetCollectors(cs)
			checkIndex(t, a)
			after = assignment(a, its)
			for id, c := range after {
				if before[id] != c && before[id] != "collector-3" {
					t.Fatalf("target %d moved %s -> %s though its collector stayed", id, before[id], c)
				}
				if c == "collector-3" || c == "" {
					t.Fatalf("target %d on %q", id, c)
				}
			}
			if rec.moved["collectors_changed"] == 0 {
				t.Error("moves not reported")
			}
		})
	}
}

func TestConsistentHashingIsStableAcrossRestarts(t *testing.T) {
	its := items(1000, 4)
	a1, _ := New(ConsistentHashing, "", nil)
	a1.SetCollectors(collectors(4))
	a1.Apply(its, nil)
	first := assignment(a1, its)
	its2 := items(1000, 4)
	a2, _ := New(ConsistentHashing, "", nil)
	a2.Apply(its2, nil)
	a2.SetCollectors(collectors(4)) // other order of events
	if share := movedShare(first, assignment(a2, its2)); share != 0 {
		t.Fatalf("a second allocator assigns %.3f of the targets differently", share)
	}
}

func TestPerNode(t *testing.T) {
	its := items(100, 5) // targets on node-0..node-4
	for _, fallback := range []string{"", ConsistentHashing} {
		t.Run("fallback="+fallback, func(t *testing.T) {
			a, _ := New(PerNode, fallback, nil)
			a.SetCollectors(collectors(3)) // collectors on node-0..node-2
			a.Apply(its, nil)
			checkIndex(t, a)
			for _, it := range its {
				onNode := it.NodeName == "node-0" || it.NodeName == "node-1" || it.NodeName == "node-2"
				switch {
				case onNode && it.Collector != "collector-"+it.NodeName[len("node-"):]:
					t.Fatalf("target on %s assigned to %q", it.NodeName, it.Collector)
				case !onNode && fallback == "" && it.Collector != "":
					t.Fatalf("target on %s assigned to %q without fallback", it.NodeName, it.Collector)
				case !onNode && fallback != "" && it.Collector == "":
					t.Fatalf("target on %s unassigned despite fallback", it.NodeName)
				}
			}
			_, u := a.Counts()
			if fallback == "" && u != 40 {
				t.Fatalf("unassigned = %d, want 40", u)
			}
		})
	}
}

func TestRemovedTargetsLeaveTheIndex(t *testing.T) {
	for _, s := range []string{ConsistentHashing, LeastWeighted, PerNode} {
		a, _ := New(s, ConsistentHashing, nil)
		a.SetCollectors(collectors(3))
		its := items(300, 3)
		a.Apply(its, nil)
		a.Apply(nil, its[:100])
		checkIndex(t, a)
		if a.Len() != 200 {
			t.Fatalf("%s: %d targets left", s, a.Len())
		}
		if len(a.Jobs()) != 7 {
			t.Fatalf("%s: jobs %v", s, a.Jobs())
		}
		a.Apply(nil, its[100:])
		if len(a.Jobs()) != 0 {
			t.Fatalf("%s: jobs %v after removing all", s, a.Jobs())
		}
	}
}

func TestNewRejectsUnknownStrategy(t *testing.T) {
	if _, err := New("round-robin", "", nil); err == nil {
		t.Fatal("no error")
	}
	if _, err := New(PerNode, "nope", nil); err == nil {
		t.Fatal("no error for fallback")
	}
}

// TestConsistentHashingPlacesByAddress is issue 33, finding 2: a pod's readiness flip changes a
// __meta_* label, so discovery reports each target as a new one. Placement by all labels moved 888
// of 1,000 targets to another collector; placement by address (as upstream's) moves none. The
// positive control: a target with another address may land elsewhere (the placement is not
// constant), and all four collectors get targets.
func TestConsistentHashingPlacesByAddress(t *testing.T) {
	build := func(ready string, idBase int) []*target.Item {
		out := make([]*target.Item, 1000)
		for i := range out {
			l := labels.FromStrings("__address__", fmt.Sprintf("10.1.%d.%d:8080", i/250, i%250),
				"__meta_kubernetes_pod_ready", ready, "__meta_kubernetes_pod_name", fmt.Sprintf("pod-%d", i))
			out[i] = target.NewItem("pods", l, uint64(idBase+i))
		}
		return out
	}
	a, _ := New(ConsistentHashing, "", nil)
	a.SetCollectors(collectors(4))
	ready := build("true", 1)
	a.Apply(ready, nil)
	before := map[string]string{}
	perCollector := map[string]int{}
	for _, it := range ready {
		before[it.TargetURL] = it.Collector
		perCollector[it.Collector]++
	}
	if len(perCollector) != 4 {
		t.Fatalf("targets went to %d of 4 collectors: %v", len(perCollector), perCollector)
	}
	notReady := build("false", 5001)
	a.Apply(notReady, ready)
	moved := 0
	for _, it := range notReady {
		if it.Collector == "" {
			t.Fatalf("%s unassigned after the flip", it.TargetURL)
		}
		if before[it.TargetURL] != it.Collector {
			moved++
		}
	}
	if moved != 0 {
		t.Fatalf("a readiness flip moved %d of 1000 targets to another collector", moved)
	}
}
