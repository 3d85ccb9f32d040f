package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/otelop/otelop/bench/internal/procstat"
)

// operatorProc is the operator running as a separate local process, as upstream was measured.
type operatorProc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	probe   string
	metrics string
	started time.Time
	rss     *procstat.RSSSampler
}

// startOperator starts bin with the common flags plus extra and waits for /readyz.
func startOperator(ctx context.Context, bin, kubeconfig, logPath string, common, extra []string, timeout time.Duration) (*operatorProc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	probe, metrics := freeAddr(), freeAddr()
	args := append([]string{"--kubeconfig=" + kubeconfig, "--metrics-addr=" + metrics, "--metrics-secure=false",
		"--health-probe-addr=" + probe}, common...)
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// The operator dies with the harness; it never outlives an interrupted run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting the operator %s: %w", bin, err)
	}
	p := &operatorProc{cmd: cmd, exited: make(chan struct{}), logPath: logPath, probe: probe, metrics: metrics,
		started: time.Now()}
	p.rss = procstat.StartRSSSampler(cmd.Process.Pid, 500*time.Millisecond)
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.exited) }()
	say("operator started (pid %d%s); log: %s", cmd.Process.Pid, strings.TrimRight(" "+strings.Join(extra, " "), " "), logPath)
	deadline := time.Now().Add(timeout)
	for {
		if p.hasExited() {
			return p, fmt.Errorf("the operator exited before /readyz\n%s", p.logTail(30))
		}
		if procstat.HTTPOK(ctx, "http://"+probe+"/readyz") {
			break
		}
		if ctx.Err() != nil {
			return p, fmt.Errorf("interrupted while waiting for the operator's /readyz: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("the operator was not ready within %s\n%s", timeout, p.logTail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
	say("operator ready after %s (readyz %s, metrics %s)", time.Since(p.started).Round(100*time.Millisecond), probe, metrics)
	return p, nil
}

func (p *operatorProc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// alive returns an error when the operator has exited (checked inside every wait loop).
func (p *operatorProc) alive() error {
	if p != nil && p.hasExited() {
		return fmt.Errorf("the operator exited unexpectedly\n%s", p.logTail(30))
	}
	return nil
}

// stop sends SIGTERM, then SIGKILL after 10s; it always returns with the process gone.
func (p *operatorProc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.rss.Stop()
	if p.hasExited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *operatorProc) logTail(n int) string {
	data, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "--- last lines of " + p.logPath + " ---\n" + strings.Join(lines, "\n")
}

// metricsUp waits until /metrics answers (the probe server can be up while the metrics listener
// still fails), or the process exits.
func (p *operatorProc) metricsUp(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for !procstat.HTTPOK(ctx, "http://"+p.metrics+"/metrics") {
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

// metricSum sums every series of a metric on the operator's /metrics (or, when name ends in an
// open label selector, the series it starts).
func (p *operatorProc) metricSum(ctx context.Context, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metrics+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// A name with a label selector prefix (`metric{label="x"`) matches the series it starts.
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") &&
			(!strings.Contains(name, "{") || !strings.HasPrefix(line, name)) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			sum += v
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no %s in the operator's /metrics", name)
	}
	return sum, nil
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
	addr, err := procstat.FreeAddr()
	if err != nil {
		return "127.0.0.1:0"
	}
	return addr
}
