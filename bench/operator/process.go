package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// operatorProc is the operator running as a separate local process, as upstream was measured.
type operatorProc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	probe   string
	metrics string
	started time.Time
	rss     *rssSampler
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
	p.rss = startRSSSampler(cmd.Process.Pid, 500*time.Millisecond)
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.exited) }()
	say("operator started (pid %d%s); log: %s", cmd.Process.Pid, strings.TrimRight(" "+strings.Join(extra, " "), " "), logPath)
	deadline := time.Now().Add(timeout)
	for {
		if p.hasExited() {
			return p, fmt.Errorf("the operator exited before /readyz\n%s", p.logTail(30))
		}
		if httpOK(ctx, "http://"+probe+"/readyz") {
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
	p.rss.stop()
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

// rssSampler reads VmRSS of a whole process from /proc/<pid>/status at a fixed interval.
type rssSampler struct {
	mu      sync.Mutex
	samples []rssSample
	done    chan struct{}
	once    sync.Once
}

type rssSample struct {
	t  time.Time
	kb int64
}

func startRSSSampler(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	path := filepath.Join("/proc", strconv.Itoa(pid), "status")
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if kb, err := vmRSS(path); err == nil {
				s.mu.Lock()
				s.samples = append(s.samples, rssSample{time.Now(), kb})
				s.mu.Unlock()
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() { s.once.Do(func() { close(s.done) }) }

func vmRSS(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

// rssStats summarises the samples in [from, to]: the median is "steady", the maximum "peak".
type rssStats struct {
	SteadyMB float64 `json:"steady_mb"`
	PeakMB   float64 `json:"peak_mb"`
	Samples  int     `json:"samples"`
}

func (s *rssSampler) window(from, to time.Time) rssStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var kbs []int64
	for _, x := range s.samples {
		if !x.t.Before(from) && !x.t.After(to) {
			kbs = append(kbs, x.kb)
		}
	}
	if len(kbs) == 0 {
		return rssStats{}
	}
	slices.Sort(kbs)
	return rssStats{SteadyMB: mb(kbs[len(kbs)/2]), PeakMB: mb(kbs[len(kbs)-1]), Samples: len(kbs)}
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer l.Close()
	return l.Addr().String()
}

func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
