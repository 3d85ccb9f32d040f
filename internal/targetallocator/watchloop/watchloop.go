// Package watchloop is the event loop the target allocator's watchers share (the collector pod
// watcher and the prometheus_cr watcher): informer events only mark a change pending, and the
// watcher's report runs at most once an interval while one is, so a burst of events costs one
// report.
package watchloop

import (
	"context"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Changes is the pending-change signal informer events set. Create it with New.
type Changes struct {
	c chan struct{}
}

// New returns a signal with no change pending.
func New() *Changes {
	return &Changes{c: make(chan struct{}, 1)}
}

// Poke marks a change pending; it never blocks.
func (ch *Changes) Poke() {
	select {
	case ch.c <- struct{}{}:
	default:
	}
}

// Handler pokes on every add, update and delete.
func (ch *Changes) Handler() cache.ResourceEventHandler {
	poke := func(any) { ch.Poke() }
	return cache.ResourceEventHandlerFuncs{AddFunc: poke, DeleteFunc: poke, UpdateFunc: func(_, n any) { poke(n) }}
}

// Start adds Handler to inf and runs inf until ctx ends; it does not wait for the cache.
func (ch *Changes) Start(ctx context.Context, inf cache.SharedIndexInformer) error {
	if _, err := inf.AddEventHandler(ch.Handler()); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	return nil
}

// Every is a periodic check of Loop: Check runs every Interval on Loop's goroutine (so it may
// change what report reads), and a true result marks a change pending.
type Every struct {
	Interval time.Duration
	Check    func() bool
}

// Always is a Check that always marks a change pending (a periodic re-read).
func Always() bool { return true }

// Loop calls report once, then at most once per interval while a change is pending, until ctx
// ends. The checks of every are run at their own intervals.
func (ch *Changes) Loop(ctx context.Context, interval time.Duration, report func(), every ...Every) {
	report()
	due := make(chan func() bool)
	for _, e := range every {
		go tick(ctx, e, due)
	}
	limit := time.NewTicker(interval)
	defer limit.Stop()
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch.c:
			pending = true
		case check := <-due:
			if check() {
				pending = true
			}
		case <-limit.C:
			if pending {
				pending = false
				report()
			}
		}
	}
}

// tick hands e.Check to Loop every e.Interval until ctx ends.
func tick(ctx context.Context, e Every, due chan<- func() bool) {
	t := time.NewTicker(e.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			select {
			case due <- e.Check:
			case <-ctx.Done():
				return
			}
		}
	}
}
