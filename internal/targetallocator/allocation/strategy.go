package allocation

import (
	"sort"

	"github.com/cespare/xxhash/v2"

	"github.com/otelop/otelop/internal/targetallocator/target"
)

// pick returns the collector the strategy assigns a new target to, nil when none fits.
func (a *Allocator) pick(it *target.Item) *collectorState {
	return a.pickWith(a.strategy, it)
}

func (a *Allocator) pickWith(strategy string, it *target.Item) *collectorState {
	switch strategy {
	case ConsistentHashing:
		return rendezvousSlice(it.Hash, a.ordered)
	case LeastWeighted:
		return a.leastLoaded(nil)
	case PerNode:
		if it.NodeName != "" {
			if cs := a.byNode[it.NodeName]; len(cs) == 1 {
				return cs[0]
			} else if len(cs) > 1 {
				return rendezvousSlice(it.Hash, cs)
			}
		}
		if a.fallback != "" && a.fallback != LeastWeighted {
			return a.pickWith(a.fallback, it)
		}
		if a.fallback == LeastWeighted {
			return a.leastLoaded(nil)
		}
	}
	return nil
}

// rendezvous is highest-random-weight hashing: the target goes to the collector whose
// combination with the target hashes highest. Adding a collector moves only the targets it now
// wins (1/(n+1) of them on average); removing one moves only its own targets.
func rendezvousSlice(h uint64, cs []*collectorState) *collectorState {
	var best *collectorState
	var bestW uint64
	for _, c := range cs {
		w := target.Mix(h ^ c.key)
		if best == nil || w > bestW {
			best, bestW = c, w
		}
	}
	return best
}

func nameKey(name string) uint64 { return xxhash.Sum64String(name) }

// leastLoaded returns the collector with the fewest targets (ties by name), skipping skip.
func (a *Allocator) leastLoaded(skip *collectorState) *collectorState {
	var best *collectorState
	for _, c := range a.collectors {
		if c == skip {
			continue
		}
		if best == nil || c.count < best.count || (c.count == best.count && c.Name < best.Name) {
			best = c
		}
	}
	return best
}

// assignUnassigned gives every unassigned target to the least loaded collector and returns how
// many of them had a collector before (moves).
func (a *Allocator) assignUnassigned() int {
	if len(a.collectors) == 0 {
		return 0
	}
	moved := 0
	for _, it := range a.items {
		if a.isAssigned(it) {
			continue
		}
		if it.Collector != "" {
			moved++
		}
		a.assign(it, a.leastLoaded(nil))
	}
	return moved
}

// rebalance moves targets from collectors above their fair share to collectors below it until
// no two collectors differ by more than one target: the fewest moves that reach that balance.
// Each busy collector's index is walked once, so the cost is linear in the targets moved.
func (a *Allocator) rebalance() int {
	cs := a.sortedCollectors()
	n := len(cs)
	if n < 2 {
		return 0
	}
	total := 0
	for _, c := range cs {
		total += c.count
	}
	// The first total%n collectors in the busiest-first order may keep one extra target.
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].count > cs[j].count })
	quota := make([]int, n)
	for i := range cs {
		quota[i] = total / n
		if i < total%n {
			quota[i]++
		}
	}
	var surplus []*target.Item
	for i, c := range cs {
		need := c.count - quota[i]
		for _, m := range c.jobs {
			if need <= 0 {
				break
			}
			for _, it := range m {
				if need <= 0 {
					break
				}
				surplus = append(surplus, it)
				need--
			}
		}
	}
	moved := 0
	for i, c := range cs {
		for c.count < quota[i] && len(surplus) > 0 {
			it := surplus[len(surplus)-1]
			surplus = surplus[:len(surplus)-1]
			a.unassign(it)
			a.assign(it, c)
			moved++
		}
	}
	return moved
}
