package statuswrite

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// fakeClock is a settable clock for the window arithmetic (the controllers' tests use real time).
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }

func newTestCoalescer(window time.Duration) (*Coalescer, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	c := New(window)
	c.now = clk.now
	return c, clk
}

func TestFinalIsWrittenAtOnce(t *testing.T) {
	c, _ := newTestCoalescer(5 * time.Second)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	if write, wait := c.Decide(key, true); !write || wait != 0 {
		t.Fatalf("final: write=%v wait=%v, want true 0", write, wait)
	}
	if c.Pending() != 0 {
		t.Fatalf("a final status leaves no state, %d pending", c.Pending())
	}
}

func TestTransitionalWaitsForTheWindow(t *testing.T) {
	c, clk := newTestCoalescer(5 * time.Second)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	steps := []struct {
		advance time.Duration
		final   bool
		write   bool
		wait    time.Duration
	}{
		{0, false, false, 5 * time.Second},               // the window starts
		{2 * time.Second, false, false, 3 * time.Second}, // still pending: the rest of the window
		{3 * time.Second, false, true, 0},                // pending for the window: write
	}
	for i, s := range steps {
		clk.t = clk.t.Add(s.advance)
		write, wait := c.Decide(key, s.final)
		if write != s.write || wait != s.wait {
			t.Fatalf("step %d: write=%v wait=%v, want %v %v", i, write, wait, s.write, s.wait)
		}
	}
	c.Forget(key)
	// After a write the next transitional status starts a new window.
	if write, wait := c.Decide(key, false); write || wait != 5*time.Second {
		t.Fatalf("after the write: write=%v wait=%v, want false 5s", write, wait)
	}
	// A final status is written at once even while a transitional one is pending.
	clk.t = clk.t.Add(time.Second)
	if write, _ := c.Decide(key, true); !write {
		t.Fatal("a final status must not wait")
	}
	c.Forget(key)
	if c.Pending() != 0 {
		t.Fatalf("%d pending after Forget", c.Pending())
	}
}

func TestKeysAreIndependent(t *testing.T) {
	c, clk := newTestCoalescer(5 * time.Second)
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	c.Decide(a, false)
	clk.t = clk.t.Add(4 * time.Second)
	if _, wait := c.Decide(b, false); wait != 5*time.Second {
		t.Fatalf("b's window must start at b's first status, wait=%v", wait)
	}
	clk.t = clk.t.Add(time.Second)
	if write, _ := c.Decide(a, false); !write {
		t.Fatal("a has been pending for the window")
	}
	if write, _ := c.Decide(b, false); write {
		t.Fatal("b has not")
	}
}

func TestZeroWindowWritesAtOnce(t *testing.T) {
	c := New(0)
	if write, wait := c.Decide(types.NamespacedName{Name: "a"}, false); !write || wait != 0 {
		t.Fatalf("window 0: write=%v wait=%v", write, wait)
	}
	if c.Pending() != 0 {
		t.Fatal("window 0 keeps no state")
	}
}

// TestConcurrentWorkers runs Decide and Forget from several goroutines (go test -race).
func TestConcurrentWorkers(t *testing.T) {
	c := New(time.Millisecond)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				key := types.NamespacedName{Name: string(rune('a' + (w+i)%5))}
				if write, _ := c.Decide(key, i%7 == 0); write {
					c.Forget(key)
				}
			}
		}()
	}
	wg.Wait()
}
