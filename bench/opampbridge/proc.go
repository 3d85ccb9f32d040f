package main

import (
	"context"
	"errors"
	"time"

	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/test/proc"
)

// bridgeProc is the bridge running as a separate local process, so that its RSS and CPU time are
// the whole process's.
type bridgeProc struct {
	*proc.Process
	health  string
	started time.Time
	rss     *procstat.RSSSampler
}

// startBridge starts bin with args, its output going to logPath. The clock starts just before
// exec.
func startBridge(bin string, args, env []string, logPath, health string) (*bridgeProc, error) {
	started := time.Now()
	pr, err := proc.Start("bridge", bin, args, logPath, env...)
	if err != nil {
		return nil, err
	}
	p := &bridgeProc{Process: pr, health: health, started: started}
	p.rss = procstat.StartRSSSampler(pr.Pid(), 500*time.Millisecond)
	return p, nil
}

// alive returns an error when the bridge has exited.
func (p *bridgeProc) alive() error {
	if p.Exited() {
		return p.Failure(errors.New("the bridge exited unexpectedly"))
	}
	return nil
}

// stop sends SIGTERM, then SIGKILL after 10 s; it always returns with the process gone.
func (p *bridgeProc) stop() {
	if p == nil {
		return
	}
	p.rss.Stop()
	p.Stop(10 * time.Second)
}

// cpuSeconds is the bridge's user+system CPU time so far.
func (p *bridgeProc) cpuSeconds() (float64, error) {
	_, sec, err := procstat.CPU(p.Pid())
	return sec, err
}

// metric reads the sum of a metric's series from the bridge's /metrics.
func (p *bridgeProc) metric(ctx context.Context, name string) (float64, error) {
	return procstat.MetricSum(ctx, p.health, name)
}
