package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// cpuSeconds is the bridge's user+system CPU time so far, from /proc/<pid>/stat (in clock ticks
// of 1/100 s, the value of CLK_TCK on every Linux this runs on).
func (p *bridgeProc) cpuSeconds() (float64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.Pid()), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc stat: %q", s)
	}
	// Fields after the command name start at field 3 (state); utime and stime are fields 14, 15.
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat: %q", s)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc stat: %q", s)
	}
	return (ut + st) / 100, nil
}

// metric reads the sum of a metric's series from the bridge's /metrics.
func (p *bridgeProc) metric(ctx context.Context, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.health+"/metrics", nil)
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
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no %s in the bridge's /metrics", name)
	}
	return sum, nil
}
