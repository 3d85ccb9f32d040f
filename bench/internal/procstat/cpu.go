package procstat

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on every Linux we run on).
const clockTicks = 100

// CPU reads the command name of pid and the CPU seconds (user + system) it has used so far,
// from /proc/<pid>/stat.
func CPU(pid int) (string, float64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, err
	}
	s := string(data)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	name := s[open+1 : closing]
	// Fields after the command: state is field 3; utime and stime are fields 14 and 15.
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return "", 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("/proc/%d/stat: unexpected times", pid)
	}
	return name, (ut + st) / clockTicks, nil
}

// CPUByName is the CPU seconds used so far by each of pids, summed by command name (pids that
// are gone are left out).
func CPUByName(pids []int) map[string]float64 {
	t := map[string]float64{}
	for _, pid := range pids {
		if name, sec, err := CPU(pid); err == nil {
			t[name] += sec
		}
	}
	return t
}

// MetricSum sums every series of a metric on http://<addr>/metrics (Prometheus text format).
// A name with an open label selector (`metric{label="x"`) sums the series it starts.
func MetricSum(ctx context.Context, addr, name string) (float64, error) {
	var sum float64
	found := false
	err := scrape(ctx, addr, func(line string, v float64) {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") ||
			(strings.Contains(name, "{") && strings.HasPrefix(line, name)) {
			sum += v
			found = true
		}
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no %s in %s/metrics", name, addr)
	}
	return sum, nil
}

// MetricByLabel sums the series of a metric on http://<addr>/metrics by the value of one of
// their labels (series without that label are left out).
func MetricByLabel(ctx context.Context, addr, name, label string) (map[string]float64, error) {
	sums := map[string]float64{}
	key := label + "=\""
	err := scrape(ctx, addr, func(line string, v float64) {
		if !strings.HasPrefix(line, name+"{") {
			return
		}
		labels := line[len(name)+1 : strings.LastIndexByte(line, '}')+1]
		i := strings.Index(labels, key)
		if i < 0 || (i > 0 && labels[i-1] != ',') {
			return
		}
		val := labels[i+len(key):]
		if j := strings.IndexByte(val, '"'); j >= 0 {
			sums[val[:j]] += v
		}
	})
	return sums, err
}

// scrape calls fn with every sample line of http://<addr>/metrics and its value.
func scrape(ctx context.Context, addr string, fn func(line string, value float64)) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			fn(line, v)
		}
	}
	return sc.Err()
}
