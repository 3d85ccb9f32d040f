package watchloop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoopCoalesces: a burst of pokes costs one report, and a report comes only after a poke.
func TestLoopCoalesces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := New()
	reports := make(chan int, 16)
	var n int
	done := make(chan struct{})
	go func() {
		ch.Loop(ctx, 10*time.Millisecond, func() { n++; reports <- n })
		close(done)
	}()
	if got := <-reports; got != 1 {
		t.Fatalf("first report = %d, want 1", got)
	}
	for range 100 {
		ch.Poke()
	}
	if got := <-reports; got != 2 {
		t.Fatalf("report after pokes = %d, want 2", got)
	}
	select {
	case got := <-reports:
		t.Fatalf("report %d without a poke", got)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	<-done
}

// TestLoopEvery: a periodic check runs on the loop and its true result leads to a report.
func TestLoopEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := New()
	reports := make(chan struct{}, 16)
	var checks atomic.Int32
	check := Every{Interval: 5 * time.Millisecond, Check: func() bool { return checks.Add(1) == 3 }}
	done := make(chan struct{})
	go func() {
		ch.Loop(ctx, 5*time.Millisecond, func() { reports <- struct{}{} }, check)
		close(done)
	}()
	<-reports // the first report
	select {
	case <-reports:
	case <-time.After(10 * time.Second):
		t.Fatal("no report after the check returned true")
	}
	if c := checks.Load(); c < 3 {
		t.Fatalf("reported after %d checks, want at least 3", c)
	}
	cancel()
	<-done
}
