// Package procstat holds the process and machine helpers the benchmark mains share: a VmRSS
// sampler for a process started by the benchmark, free loopback addresses, readiness probes and
// the machine's load and memory for the report. Linux only (/proc).
package procstat

import (
	"errors"
	"fmt"
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
