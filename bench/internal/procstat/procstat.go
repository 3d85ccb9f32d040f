// Package procstat holds the process and machine helpers the benchmark mains share: a VmRSS
// sampler for a process started by the benchmark, free loopback addresses, readiness probes and
// the machine's load and memory for the report. Linux only (/proc).
package procstat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RSSSampler reads a process's VmRSS from /proc/<pid>/status at a fixed interval until Stop.
type RSSSampler struct {
	mu      sync.Mutex
	samples []rssSample
	done    chan struct{}
	once    sync.Once
}

type rssSample struct {
	t  time.Time
	kb int64
}

// StartRSSSampler samples pid now and then every interval.
func StartRSSSampler(pid int, every time.Duration) *RSSSampler {
	s := &RSSSampler{done: make(chan struct{})}
	path := filepath.Join("/proc", strconv.Itoa(pid), "status")
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if kb, err := VmRSS(path); err == nil {
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

// Stop ends sampling; the samples stay readable.
func (s *RSSSampler) Stop() { s.once.Do(func() { close(s.done) }) }

// Window summarises the samples taken in [from, to]: their median ("steady"), maximum ("peak") and
// count; all zero without samples.
func (s *RSSSampler) Window(from, to time.Time) (medianKB, peakKB int64, n int) {
	s.mu.Lock()
	var kbs []int64
	for _, x := range s.samples {
		if !x.t.Before(from) && !x.t.After(to) {
			kbs = append(kbs, x.kb)
		}
	}
	s.mu.Unlock()
	if len(kbs) == 0 {
		return 0, 0, 0
	}
	slices.Sort(kbs)
	return kbs[len(kbs)/2], kbs[len(kbs)-1], len(kbs)
}

// VmRSS reads the VmRSS line (KiB) of a /proc/<pid>/status file.
func VmRSS(statusPath string) (int64, error) {
	data, err := os.ReadFile(statusPath)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS in " + statusPath)
}

// FreeAddr returns a free 127.0.0.1:port (closed again: the process started next binds it).
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort is FreeAddr's port.
func FreePort() (int, error) {
	addr, err := FreeAddr()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}

// HTTPOK reports whether GET url answers 200 within 2 seconds.
func HTTPOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// LoadAvg returns the first three fields of /proc/loadavg, or "?".
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// MemTotal returns the machine's memory from /proc/meminfo, e.g. "15.6 GiB", or "?".
func MemTotal() string {
	data, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}
