// Package pipeline connects service discovery to allocation: each update of the discovered
// target groups goes through the target set (identity, filter) into the allocator.
package pipeline

import (
	"sync"
	"time"

	"github.com/prometheus/prometheus/discovery/targetgroup"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/targetallocator/target"
)

// Pipeline turns discovery updates into allocation changes. Process may be called from one
// goroutine at a time; the allocator may be read concurrently.
type Pipeline struct {
	mu    sync.Mutex
	set   *target.Set
	alloc *allocation.Allocator
	last  map[string][]*targetgroup.Group // the latest discovery update, for Reconfigure
	// Observe, when set, is called after each update with its duration and the number of
	// targets kept.
	Observe func(d time.Duration, targets int)
}

// New returns a pipeline feeding alloc; filter may be nil.
func New(alloc *allocation.Allocator, filter target.Filter) *Pipeline {
	return &Pipeline{set: target.NewSet(filter), alloc: alloc}
}

// Process applies one discovery update: tsets holds every job's groups (the discovery
// manager's full view, not a delta).
func (p *Pipeline) Process(tsets map[string][]*targetgroup.Group) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := time.Now()
	p.last = tsets
	added, removed := p.set.Update(tsets)
	p.alloc.Apply(added, removed)
	if p.Observe != nil {
		p.Observe(time.Since(start), p.set.Len())
	}
}

// Reconfigure runs change (which updates the filter) while no update is processed, forgets the
// targets of jobs and brings them back at once through the new filter from the latest discovery
// update, in one allocator change: readers never see the jobs without targets (they waited for
// the next discovery update before, up to 5 s).
func (p *Pipeline) Reconfigure(jobs map[string]bool, change func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if change != nil {
		change()
	}
	removed := p.set.Forget(jobs)
	var added []*target.Item
	if p.last != nil && len(jobs) > 0 {
		var gone []*target.Item
		added, gone = p.set.Update(p.last)
		removed = append(removed, gone...)
	}
	p.alloc.Apply(added, removed)
}
