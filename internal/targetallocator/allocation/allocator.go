// Package allocation assigns targets to collectors. It is pure: no I/O, no clocks; the caller
// feeds it target changes (from package target) and the current set of collectors, and reads
// the assignment back. Strategies: consistent-hashing (rendezvous hashing), least-weighted
// (fewest targets, rebalanced with the fewest moves when collectors come and go) and per-node
// (the collector on the target's node, with an optional fallback strategy).
package allocation

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/otelop/otelop/internal/targetallocator/target"
)

// Strategy names, as in the configuration file.
const (
	ConsistentHashing = "consistent-hashing"
	LeastWeighted     = "least-weighted"
	PerNode           = "per-node"
)

// Collector is a collector pod that receives targets.
type Collector struct {
	// Name is the pod name (the collector_id the collector asks with).
	Name string
	// NodeName is the node the pod runs on.
	NodeName string
}

// Observer is told about allocation changes (metrics). Every method may be nil-safe no-ops.
type Observer interface {
	// Moved counts targets that changed collector (not first assignments), by reason.
	Moved(reason string, n int)
	// Assigned reports targets per collector and the number of unassigned targets.
	Assigned(perCollector map[string]int, unassigned int)
}

type collectorState struct {
	Collector
	key   uint64 // hash of the name (rendezvous hashing)
	count int
	jobs  map[string]map[uint64]*target.Item
}

// Allocator holds the targets, the collectors and the assignment. It is safe for concurrent
// use: writers are the discovery and collector loops, readers the HTTP handlers.
type Allocator struct {
	mu         sync.RWMutex
	strategy   string
	fallback   string
	items      map[uint64]*target.Item
	collectors map[string]*collectorState
	byNode     map[string][]*collectorState
	ordered    []*collectorState          // collectors sorted by name
	owner      map[uint64]*collectorState // target ID -> the collector whose index holds it
	jobs       map[string]int             // job -> number of targets
	unassigned int
	obs        Observer
	version    uint64
}

// New returns an allocator for strategy (one of the constants); fallback is used by per-node for
// targets without a collector on their node ("" leaves them unassigned).
func New(strategy, fallback string, obs Observer) (*Allocator, error) {
	for _, s := range []struct{ key, value string }{{"allocation_strategy", strategy}, {"allocation_fallback_strategy", fallback}} {
		switch s.value {
		case ConsistentHashing, LeastWeighted, PerNode:
		case "":
			if s.key == "allocation_strategy" {
				return nil, fmt.Errorf("allocation_strategy: empty")
			}
		default:
			return nil, fmt.Errorf("%s: %q is not one of consistent-hashing, least-weighted, per-node", s.key, s.value)
		}
	}
	if fallback == PerNode {
		fallback = ""
	}
	return &Allocator{strategy: strategy, fallback: fallback, items: map[uint64]*target.Item{},
		collectors: map[string]*collectorState{}, owner: map[uint64]*collectorState{}, byNode: map[string][]*collectorState{}, jobs: map[string]int{}, obs: obs}, nil
}

// Strategy returns the strategy name.
func (a *Allocator) Strategy() string { return a.strategy }

// Version changes whenever the assignment changes; readers may cache responses by it.
func (a *Allocator) Version() uint64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.version
}

// Apply adds and removes targets (as returned by target.Set.Update) and assigns the new ones.
func (a *Allocator) Apply(added, removed []*target.Item) {
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.version++
	for _, it := range removed {
		if _, ok := a.items[it.ID]; !ok {
			continue
		}
		delete(a.items, it.ID)
		a.unassign(it)
		a.unassigned-- // gone, not unassigned
		if a.jobs[it.JobName]--; a.jobs[it.JobName] <= 0 {
			delete(a.jobs, it.JobName)
		}
	}
	for _, it := range added {
		if _, ok := a.items[it.ID]; ok {
			continue
		}
		it.Collector = ""
		a.items[it.ID] = it
		a.jobs[it.JobName]++
		a.unassigned++
		if c := a.pick(it); c != nil {
			a.assign(it, c)
		}
	}
	a.report()
}

// SetCollectors replaces the set of collectors and moves the targets the strategy says must
// move: consistent-hashing and per-node only those whose collector changed, least-weighted the
// targets of removed collectors and, when collectors were added, just enough targets from the
// busiest collectors to bring every collector within one target of the others.
func (a *Allocator) SetCollectors(cs []Collector) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.collectorsChanged(cs) {
		return
	}
	a.version++
	added := a.replaceCollectors(cs)
	moved := 0
	switch a.strategy {
	case LeastWeighted:
		moved += a.assignUnassigned()
		if added > 0 {
			moved += a.rebalance()
		}
	default:
		moved += a.reassignAll()
	}
	// Items left unassigned forget the collector they had.
	if a.unassigned > 0 {
		for _, it := range a.items {
			if it.Collector != "" && !a.isAssigned(it) {
				it.Collector = ""
			}
		}
	}
	if a.obs != nil && moved > 0 {
		a.obs.Moved("collectors_changed", moved)
	}
	a.report()
}

// collectorsChanged reports whether cs differs from the current collectors (a name added or
// removed, or a collector on another node).
func (a *Allocator) collectorsChanged(cs []Collector) bool {
	next := make(map[string]bool, len(cs))
	changed := false
	for _, c := range cs {
		next[c.Name] = true
		if old, ok := a.collectors[c.Name]; !ok || old.NodeName != c.NodeName {
			changed = true
		}
	}
	for name := range a.collectors {
		if !next[name] {
			changed = true
		}
	}
	return changed
}

// replaceCollectors makes cs the collectors: the targets of collectors that go (or changed node)
// become unassigned, remembering their collector to count a move. It returns how many collectors
// were added.
func (a *Allocator) replaceCollectors(cs []Collector) int {
	for name, st := range a.collectors {
		if n, ok := findCollector(cs, name); ok && n.NodeName == st.NodeName {
			continue
		}
		for _, items := range st.jobs {
			for _, it := range items {
				a.unassign(it)
				it.Collector = name // remembered, to count a move when reassigned
			}
		}
		delete(a.collectors, name)
	}
	added := 0
	for _, c := range cs {
		if _, ok := a.collectors[c.Name]; !ok {
			a.collectors[c.Name] = &collectorState{Collector: c, key: nameKey(c.Name), jobs: map[string]map[uint64]*target.Item{}}
			added++
		}
	}
	a.byNode = map[string][]*collectorState{}
	a.ordered = a.sortedCollectors()
	for _, st := range a.ordered {
		a.byNode[st.NodeName] = append(a.byNode[st.NodeName], st)
	}
	return added
}

// reassignAll puts every target where a deterministic strategy now says, and returns how many
// moved from one collector to another.
func (a *Allocator) reassignAll() int {
	moved := 0
	for _, it := range a.items {
		c := a.pick(it)
		assigned := a.isAssigned(it)
		switch {
		case c == nil:
			if assigned {
				a.unassign(it)
			}
		case assigned && a.owner[it.ID] == c:
		default:
			prev := it.Collector
			if assigned {
				a.unassign(it)
			}
			a.assign(it, c)
			if prev != "" && prev != c.Name {
				moved++
			}
		}
	}
	return moved
}

func findCollector(cs []Collector, name string) (Collector, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c, true
		}
	}
	return Collector{}, false
}

// isAssigned tells whether it is in its collector's index (Collector may hold a stale name
// while a move is in progress).
func (a *Allocator) isAssigned(it *target.Item) bool {
	return a.owner[it.ID] != nil
}

func (a *Allocator) assign(it *target.Item, c *collectorState) {
	it.Collector = c.Name
	m := c.jobs[it.JobName]
	if m == nil {
		m = map[uint64]*target.Item{}
		c.jobs[it.JobName] = m
	}
	m[it.ID] = it
	a.owner[it.ID] = c
	c.count++
	a.unassigned--
}

// unassign takes it out of its collector's index; it.Collector is left for the caller.
func (a *Allocator) unassign(it *target.Item) {
	st := a.owner[it.ID]
	if st == nil {
		return
	}
	delete(a.owner, it.ID)
	m := st.jobs[it.JobName]
	delete(m, it.ID)
	if len(m) == 0 {
		delete(st.jobs, it.JobName)
	}
	st.count--
	a.unassigned++
}

func (a *Allocator) sortedCollectors() []*collectorState {
	out := make([]*collectorState, 0, len(a.collectors))
	for _, c := range a.collectors {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (a *Allocator) report() {
	if a.obs == nil {
		return
	}
	per := make(map[string]int, len(a.collectors))
	for name, c := range a.collectors {
		per[name] = c.count
	}
	a.obs.Assigned(per, a.unassigned)
}

// Collectors returns the collectors, sorted by name.
func (a *Allocator) Collectors() []Collector {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]Collector, 0, len(a.collectors))
	for _, c := range a.sortedCollectors() {
		out = append(out, c.Collector)
	}
	return out
}

// Jobs returns the jobs that have at least one target, sorted.
func (a *Allocator) Jobs() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]string, 0, len(a.jobs))
	for j := range a.jobs {
		out = append(out, j)
	}
	slices.Sort(out)
	return out
}

// Targets returns the targets of job assigned to collector, sorted by stable hash. The items
// must not be modified.
func (a *Allocator) Targets(collector, job string) []*target.Item {
	a.mu.RLock()
	defer a.mu.RUnlock()
	st := a.collectors[collector]
	if st == nil {
		return nil
	}
	m := st.jobs[job]
	out := make([]*target.Item, 0, len(m))
	for _, it := range m {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Hash != out[j].Hash {
			return out[i].Hash < out[j].Hash
		}
		return out[i].TargetURL < out[j].TargetURL
	})
	return out
}

// Counts returns the number of targets per collector and the number unassigned.
func (a *Allocator) Counts() (map[string]int, int) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	per := make(map[string]int, len(a.collectors))
	for name, c := range a.collectors {
		per[name] = c.count
	}
	return per, a.unassigned
}

// Len returns the number of targets.
func (a *Allocator) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.items)
}
