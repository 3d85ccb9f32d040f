package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestRunCallsEachIndexOnce(t *testing.T) {
	seen := make([]atomic.Int32, 100)
	var running, most atomic.Int32
	err := Run(context.Background(), len(seen), 4, func(_ context.Context, i int) error {
		if r := running.Add(1); r > most.Load() {
			most.Store(r)
		}
		defer running.Add(-1)
		seen[i].Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("index %d called %d times", i, n)
		}
	}
	if most.Load() > 4 {
		t.Fatalf("%d calls at once, want at most 4", most.Load())
	}
}

func TestRunStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := Run(context.Background(), 1000, 1, func(_ context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if calls.Load() != 4 {
		t.Fatalf("%d calls, want 4 (none after the error)", calls.Load())
	}
}
