package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/test/proc"
)

// operatorProc is the operator running as a separate local process, as upstream was measured.
type operatorProc struct {
	*proc.Process
	probe   string
	metrics string
	started time.Time
	rss     *procstat.RSSSampler
}

// startOperator starts bin with the common flags plus extra and waits for /readyz.
func startOperator(ctx context.Context, bin, kubeconfig, logPath string, common, extra []string, timeout time.Duration) (*operatorProc, error) {
	probe, metrics := freeAddr(), freeAddr()
	args := append([]string{"--kubeconfig=" + kubeconfig, "--metrics-addr=" + metrics, "--metrics-secure=false",
		"--health-probe-addr=" + probe}, common...)
	args = append(args, extra...)
	pr, err := proc.Start("operator", bin, args, logPath)
	if err != nil {
		return nil, err
	}
	p := &operatorProc{Process: pr, probe: probe, metrics: metrics, started: time.Now()}
	p.rss = procstat.StartRSSSampler(pr.Pid(), 500*time.Millisecond)
	say("operator started (pid %d%s); log: %s", pr.Pid(), strings.TrimRight(" "+strings.Join(extra, " "), " "), logPath)
	if err := pr.WaitHTTP(ctx, "http://"+probe+"/readyz", 200*time.Millisecond, timeout); err != nil {
		return p, err
	}
	say("operator ready after %s (readyz %s, metrics %s)", time.Since(p.started).Round(100*time.Millisecond), probe, metrics)
	return p, nil
}

// alive returns an error when the operator has exited (checked inside every wait loop).
func (p *operatorProc) alive() error {
	if p != nil && p.Exited() {
		return p.Failure(errors.New("the operator exited unexpectedly"))
	}
	return nil
}

// stop sends SIGTERM, then SIGKILL after 10s; it always returns with the process gone.
func (p *operatorProc) stop() {
	if p == nil {
		return
	}
	p.rss.Stop()
	p.Stop(10 * time.Second)
}

// metricsUp waits until /metrics answers (the probe server can be up while the metrics listener
// still fails), or the process exits.
func (p *operatorProc) metricsUp(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for !proc.HTTPOK(ctx, "http://"+p.metrics+"/metrics") {
		if err := p.alive(); err != nil {
			return err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the operator's /metrics (%s) did not answer within 30s", p.metrics)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// reconciles sums controller_runtime_reconcile_total over every controller and result.
func (p *operatorProc) reconciles(ctx context.Context) (float64, error) {
	return p.metricSum(ctx, "controller_runtime_reconcile_total")
}

// metricSum sums every series of a metric on the operator's /metrics (see procstat.MetricSum).
func (p *operatorProc) metricSum(ctx context.Context, name string) (float64, error) {
	return procstat.MetricSum(ctx, p.metrics, name)
}

// rssStats summarises the samples in [from, to]: the median is "steady", the maximum "peak".
type rssStats struct {
	SteadyMB float64 `json:"steady_mb"`
	PeakMB   float64 `json:"peak_mb"`
	Samples  int     `json:"samples"`
}

// rssWindow summarises the samples of s in [from, to] in MiB.
func rssWindow(s *procstat.RSSSampler, from, to time.Time) rssStats {
	med, peak, n := s.Window(from, to)
	return rssStats{SteadyMB: mb(med), PeakMB: mb(peak), Samples: n}
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// freeAddr is a free 127.0.0.1 address, or port 0 (the process then fails to start, loudly).
func freeAddr() string {
	addr, err := proc.FreeAddr()
	if err != nil {
		return "127.0.0.1:0"
	}
	return addr
}
