// Package parallel runs a benchmark's independent requests on a bounded number of goroutines.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Run calls fn(ctx, i) for i in 0..n-1 on workers goroutines. The first error cancels ctx for
// the calls still running, stops handing out new ones and is returned; so is ctx's error when
// ctx ends first.
func Run(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}
