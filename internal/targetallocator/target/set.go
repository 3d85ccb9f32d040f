package target

import (
	"hash/maphash"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/labels"
)

// Filter decides whether a new target is kept (filter_strategy) and what its labels become after
// relabelling. It sees the merged labels and is called once per new target, never again for a
// target already known.
type Filter interface {
	Relabel(job string, lbls labels.Labels) (labels.Labels, bool)
}

// Set is the current set of targets. It is not safe for concurrent use.
//
// With a filter, targets whose labels are equal after relabelling (Prometheus drops the __meta_*
// labels then) are one target for Prometheus, as for upstream's allocator: the first one is kept
// and handed out, the others wait behind it (duplicates) and one of them takes its place when it
// goes, so the target is never scraped twice and never lost.
type Set struct {
	seed    maphash.Seed
	filter  Filter
	items   map[uint64]*Item
	byKey   map[uint64][]*Item // kept items by relabelled identity; the first is the one handed out
	gen     uint64
	builder labels.Builder
	kept    int
	dups    int
}

// NewSet returns an empty set; filter may be nil (keep everything).
func NewSet(filter Filter) *Set {
	return &Set{seed: maphash.MakeSeed(), filter: filter, items: map[uint64]*Item{}, byKey: map[uint64][]*Item{},
		builder: *labels.NewBuilder(labels.EmptyLabels())}
}

// Len returns the number of targets kept by the filter and handed out (duplicates not counted).
func (s *Set) Len() int { return s.kept }

// Duplicates returns the number of kept targets that wait behind an equal one.
func (s *Set) Duplicates() int { return s.dups }

// Update replaces the set with the targets of tsets (job name -> groups, what the discovery
// manager sends) and returns the kept targets that are new and those that are gone. Targets the
// filter drops are remembered (without labels) so that they are not filtered again.
func (s *Set) Update(tsets map[string][]*targetgroup.Group) (added, removed []*Item) {
	s.gen++
	for job, groups := range tsets {
		jobHash := maphash.String(s.seed, job)
		for _, g := range groups {
			if g == nil || len(g.Targets) == 0 {
				continue
			}
			gs := s.groupSummary(g)
			for _, t := range g.Targets {
				id := s.targetID(jobHash, &gs, g.Labels, t)
				if it, ok := s.items[id]; ok {
					it.seen = s.gen
					continue
				}
				it := s.newItem(job, id, g.Labels, t)
				s.items[id] = it
				if !it.dropped && s.link(it) {
					added = append(added, it)
				}
			}
		}
	}
	var gone []uint64 // keys whose handed-out item went
	for id, it := range s.items {
		if it.seen != s.gen {
			delete(s.items, id)
			if !it.dropped && s.unlink(it) {
				removed = append(removed, it)
				gone = append(gone, it.key)
			}
		}
	}
	for _, k := range gone {
		if l := s.byKey[k]; len(l) > 0 && l[0].dup {
			l[0].dup = false
			s.dups--
			s.kept++
			added = append(added, l[0])
		}
	}
	return added, removed
}

// link records a kept item under its key and says whether it is handed out (no equal item is).
func (s *Set) link(it *Item) bool {
	l := s.byKey[it.key]
	s.byKey[it.key] = append(l, it)
	if len(l) > 0 {
		it.dup = true
		s.dups++
		return false
	}
	s.kept++
	return true
}

// unlink removes a kept item from its key and says whether it was the one handed out.
func (s *Set) unlink(it *Item) bool {
	l := s.byKey[it.key]
	for i, e := range l {
		if e == it {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(s.byKey, it.key)
	} else {
		s.byKey[it.key] = l
	}
	if it.dup {
		s.dups--
		return false
	}
	s.kept--
	return true
}

func (s *Set) newItem(job string, id uint64, group, t model.LabelSet) *Item {
	b := &s.builder
	b.Reset(labels.EmptyLabels())
	for n, v := range group {
		b.Set(string(n), string(v))
	}
	for n, v := range t {
		b.Set(string(n), string(v))
	}
	lbls := b.Labels()
	key := id // without a filter only equal label sets are one target
	if s.filter != nil {
		relabelled, keep := s.filter.Relabel(job, lbls)
		if !keep {
			return &Item{JobName: job, ID: id, seen: s.gen, dropped: true}
		}
		key = s.relabelledKey(job, relabelled)
	}
	it := NewItem(job, lbls, id)
	it.seen = s.gen
	it.key = key
	return it
}

// relabelledKey is a keyed hash of the job and the labels Prometheus keeps after relabelling
// (all but __meta_*): targets with equal keys are one target.
func (s *Set) relabelledKey(job string, l labels.Labels) uint64 {
	sum := maphash.String(s.seed, job)
	l.Range(func(lb labels.Label) {
		if strings.HasPrefix(lb.Name, model.MetaLabelPrefix) {
			return
		}
		sum += pairHash(maphash.String(s.seed, lb.Name), maphash.String(s.seed, lb.Value))
	})
	return Mix(sum)
}

// groupSummary is what the identity of a group's targets needs from the group: the sum of the
// hashes of its labels and a 256-bit Bloom filter of its label names, so that a target label
// that overrides a group label is found without a map look-up in the common case.
type groupSummary struct {
	sum   uint64
	bloom [4]uint64
}

func (s *Set) groupSummary(g *targetgroup.Group) groupSummary {
	var gs groupSummary
	for n, v := range g.Labels {
		hn := maphash.String(s.seed, string(n))
		gs.sum += pairHash(hn, maphash.String(s.seed, string(v)))
		gs.bloom[(hn>>6)&3] |= 1 << (hn & 63)
	}
	return gs
}

// targetID is a keyed hash of the job and the merged label set, independent of map order: the
// sum of a mixed hash per label pair. Keyed (per process), so that labels chosen by a tenant
// cannot be crafted to collide with another target.
func (s *Set) targetID(jobHash uint64, gs *groupSummary, group, t model.LabelSet) uint64 {
	sum := gs.sum
	for n, v := range t {
		hn := maphash.String(s.seed, string(n))
		sum += pairHash(hn, maphash.String(s.seed, string(v)))
		if gs.bloom[(hn>>6)&3]&(1<<(hn&63)) != 0 {
			if gv, ok := group[n]; ok { // the target's value replaces the group's
				sum -= pairHash(hn, maphash.String(s.seed, string(gv)))
			}
		}
	}
	return Mix(sum ^ jobHash)
}

func pairHash(hn, hv uint64) uint64 { return Mix(hn ^ Mix(hv+0x9e3779b97f4a7c15)) }

// Mix is the splitmix64 finaliser, a bijection with good avalanche; allocation mixes its
// rendezvous weights with it too.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Forget removes every target of jobs and returns the kept ones among them, so that the next
// Update builds and filters them again (their job's relabel configuration changed).
func (s *Set) Forget(jobs map[string]bool) (removed []*Item) {
	if len(jobs) == 0 {
		return nil
	}
	for id, it := range s.items {
		if !jobs[it.JobName] {
			continue
		}
		delete(s.items, id)
		if !it.dropped && s.unlink(it) {
			removed = append(removed, it)
		}
	}
	return removed
}
