package allocation

import (
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
		return rendezvous(it.Hash, a.collectors)
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
func rendezvous(h uint64, cs map[string]*collectorState) *collectorState {
	var best *collectorState
	var bestW uint64
	for _, c := range cs {
		w := mix(h ^ c.key)
		if best == nil || w > bestW || (w == bestW && c.Name < best.Name) {
			best, bestW = c, w
		}
	}
	return best
}

func rendezvousSlice(h uint64, cs []*collectorState) *collectorState {
	var best *collectorState
	var bestW uint64
	for _, c := range cs {
		w := mix(h ^ c.key)
		if best == nil || w > bestW {
			best, bestW = c, w
		}
	}
	return best
}

func nameKey(name string) uint64 { return xxhash.Sum64String(name) }

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

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

func (a *Allocator) mostLoaded() *collectorState {
	var best *collectorState
	for _, c := range a.collectors {
		if best == nil || c.count > best.count || (c.count == best.count && c.Name < best.Name) {
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

// rebalance moves targets one at a time from the busiest to the idlest collector until no two
// collectors differ by more than one target: the fewest moves that reach that balance.
func (a *Allocator) rebalance() int {
	moved := 0
	for {
		hi, lo := a.mostLoaded(), a.leastLoaded(nil)
		if hi == nil || lo == nil || hi.count-lo.count <= 1 {
			return moved
		}
		it := anyItem(hi)
		a.unassign(it)
		a.assign(it, lo)
		moved++
	}
}

func anyItem(c *collectorState) *target.Item {
	for _, m := range c.jobs {
		for _, it := range m {
			return it
		}
	}
	return nil
}
