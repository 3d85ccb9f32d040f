// Package statuswrite decides when a controller writes a custom resource's status. A final status
// (ready, failed, stalled) is written at once; a transitional one (a rollout in progress, pods
// still starting) is written only once it has been pending for a coalescing window, so that a
// rollout that completes within the window costs one status write instead of one per pod, and a
// rollout that takes longer costs at most one write per window. The caller requeues after the
// returned wait, so the last transitional status is always written eventually.
//
// The state is in memory, one timestamp per object with a deferred status; after a restart the
// window simply starts again at the first reconcile.
package statuswrite

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultWindow is the coalescing window of the operator's controllers (--status-coalesce-window).
const DefaultWindow = 5 * time.Second

// Coalescer holds, per object, since when a transitional status has been waiting to be written.
// It is safe for concurrent use by several reconcile workers. The zero value is not usable: build
// it with New.
type Coalescer struct {
	window time.Duration
	now    func() time.Time

	mu      sync.Mutex
	pending map[types.NamespacedName]time.Time
}

// New returns a Coalescer with the given window; a window of 0 or less writes every status at once.
func New(window time.Duration) *Coalescer {
	return &Coalescer{window: window, now: time.Now, pending: map[types.NamespacedName]time.Time{}}
}

// Window returns the coalescing window.
func (c *Coalescer) Window() time.Duration { return c.window }

// Decide is asked when the status computed for key differs from the stored one. A final status
// may be written now. A transitional one may be written once it has been pending for the window
// (the first call for key starts the window); until then Decide returns false and how long to
// wait before asking again. Call Forget after a successful write (the next transitional status
// starts a new window), when the computed status equals the stored one again, and when the object
// is gone.
func (c *Coalescer) Decide(key types.NamespacedName, final bool) (write bool, wait time.Duration) {
	if final || c.window <= 0 {
		return true, 0
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	since, ok := c.pending[key]
	if !ok {
		c.pending[key] = now
		return false, c.window
	}
	if elapsed := now.Sub(since); elapsed < c.window {
		return false, c.window - elapsed
	}
	return true, 0
}

// Forget drops key's state: its status was written or needs no write, or the object is gone.
func (c *Coalescer) Forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}

// Pending returns how many objects have a deferred status (for tests and metrics).
func (c *Coalescer) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}
