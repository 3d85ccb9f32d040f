package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/test/simcluster"
)

// Where converge time goes (--cost): CPU seconds of every process on the machine that takes part
// (from /proc/<pid>/stat), the operator's work-queue figures, the audit log's timing of each
// collector's writes, and optionally a CPU profile of the operator (--cpu-profile).

// cpuTimes is CPU seconds (user + system) by process name.
type cpuTimes map[string]float64

// cpuNow samples the cluster's processes, the operator and this harness.
func (b *bench) cpuNow() cpuTimes {
	t := cpuTimes{}
	if b.c != nil {
		t = procstat.CPUByName(b.c.PIDs())
	}
	if _, sec, err := procstat.CPU(os.Getpid()); err == nil {
		t["bench"] = sec
	}
	if b.op != nil {
		if _, sec, err := procstat.CPU(b.op.Pid()); err == nil {
			t["operator"] = sec
		}
	}
	return t
}

// cpuSince is the CPU seconds each process used since before.
func cpuSince(before, after cpuTimes) cpuTimes {
	d := cpuTimes{}
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

// String gives "12.3 s in total: kube-apiserver 5.1 (41%), ...", largest first.
func (t cpuTimes) String() string {
	keys := make([]string, 0, len(t))
	total := 0.0
	for k, v := range t {
		keys = append(keys, k)
		total += v
	}
	sort.Slice(keys, func(i, j int) bool { return t[keys[i]] > t[keys[j]] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.1f (%.0f%%)", k, t[k], 100*t[k]/max(total, 1e-9))
	}
	return fmt.Sprintf("%.1f s in total: %s", total, strings.Join(parts, ", "))
}

// queueStats is the operator's work-queue figures, summed over its controllers.
type queueStats struct {
	Adds         float64 `json:"adds"`
	QueueSeconds float64 `json:"queue_seconds_sum"`
	QueueCount   float64 `json:"queue_count"`
	WorkSeconds  float64 `json:"work_seconds_sum"`
	WorkCount    float64 `json:"work_count"`
	// Requests is the operator's requests to the API server by HTTP method (reads included,
	// which the audit log leaves out).
	Requests map[string]float64 `json:"requests_by_method,omitempty"`
}

func (p *operatorProc) queueStats(ctx context.Context) queueStats {
	var q queueStats
	q.Adds, _ = p.metricSum(ctx, "workqueue_adds_total")
	q.QueueSeconds, _ = p.metricSum(ctx, "workqueue_queue_duration_seconds_sum")
	q.QueueCount, _ = p.metricSum(ctx, "workqueue_queue_duration_seconds_count")
	q.WorkSeconds, _ = p.metricSum(ctx, "workqueue_work_duration_seconds_sum")
	q.WorkCount, _ = p.metricSum(ctx, "workqueue_work_duration_seconds_count")
	q.Requests, _ = procstat.MetricByLabel(ctx, p.metrics, "rest_client_requests_total", "method")
	return q
}

// String gives the mean wait in the queue and the mean reconcile.
func (q queueStats) String() string {
	s := fmt.Sprintf("%.0f adds, %.0f reconciles: mean %.0f ms queued, mean %.0f ms working (%.1f s of reconciling)",
		q.Adds, q.WorkCount, 1000*q.QueueSeconds/max(q.QueueCount, 1), 1000*q.WorkSeconds/max(q.WorkCount, 1), q.WorkSeconds)
	methods := make([]string, 0, len(q.Requests))
	for m := range q.Requests {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for i, m := range methods {
		methods[i] = fmt.Sprintf("%s %.0f", m, q.Requests[m])
	}
	if len(methods) > 0 {
		s += "; requests to the API server: " + strings.Join(methods, ", ")
	}
	return s
}

func (q queueStats) minus(o queueStats) queueStats {
	req := map[string]float64{}
	for m, n := range q.Requests {
		if d := n - o.Requests[m]; d > 0 {
			req[m] = d
		}
	}
	return queueStats{q.Adds - o.Adds, q.QueueSeconds - o.QueueSeconds, q.QueueCount - o.QueueCount,
		q.WorkSeconds - o.WorkSeconds, q.WorkCount - o.WorkCount, req}
}

// timedEvent is an audit event with its object and timestamps.
type timedEvent struct {
	simcluster.AuditEvent
	Received time.Time `json:"requestReceivedTimestamp"`
	Done     time.Time `json:"stageTimestamp"`
}

// timeline is where each collector's time went, from the audit log: from its create to the
// operator's first write for it, to its workload's first write, to its last write; and how long
// the API server took per operator write.
type timeline struct {
	Collectors    int `json:"collectors"`
	FirstWrite    pct `json:"create_to_first_operator_write_s"`
	WorkloadWrite pct `json:"create_to_workload_write_s"`
	LastWrite     pct `json:"create_to_last_operator_write_s"`
	WriteLatency  pct `json:"operator_write_latency_ms"`
	Writes        int `json:"operator_writes"`
	// ByAgent is every client's writes in the window, by user agent (its first word).
	ByAgent map[string]int `json:"writes_by_agent"`
	// ByAgentResource is every client's writes by "agent resource verb".
	ByAgentResource map[string]int `json:"writes_by_agent_resource"`
	WriteSeconds    float64        `json:"operator_write_seconds_sum"`
}

// pct is the 50th, 90th and 100th percentile of a sample.
type pct struct{ P50, P90, Max float64 }

func percentiles(v []float64) pct {
	if len(v) == 0 {
		return pct{}
	}
	sort.Float64s(v)
	at := func(q float64) float64 { return v[min(len(v)-1, int(q*float64(len(v))))] }
	return pct{at(0.5), at(0.9), v[len(v)-1]}
}

func (p pct) String() string { return fmt.Sprintf("p50 %.1f, p90 %.1f, max %.1f", p.P50, p.P90, p.Max) }

// readTimeline reads the audit log from offset from: the bench's collector creates and the
// operator's writes, keyed by namespace and the collector's name (every object it generates
// starts with "<name>-").
func readTimeline(path string, from int64) (timeline, error) {
	created := map[string]time.Time{}
	first, workload, last := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	var lat []float64
	tl := timeline{ByAgent: map[string]int{}, ByAgentResource: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return tl, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return tl, err
	}
	err = decodeLines(f, func(line []byte) {
		var ev timedEvent
		if json.Unmarshal(line, &ev) != nil || !ev.IsWrite() || ev.ObjectRef == nil {
			return
		}
		agent, _, _ := strings.Cut(ev.UserAgent, "/")
		tl.ByAgent[agent]++
		tl.ByAgentResource[agent+" "+ev.Resource()+" "+ev.Verb]++
		ref := ev.ObjectRef
		if ev.UserAgent == "bench" && ev.Verb == "create" && ref.Resource == "opentelemetrycollectors" {
			created[ref.Namespace+"/"+ref.Name] = ev.Received
			return
		}
		if !strings.HasPrefix(ev.UserAgent, "opentelemetry-operator") {
			return
		}
		tl.Writes++
		ms := float64(ev.Done.Sub(ev.Received).Microseconds()) / 1000
		tl.WriteSeconds += ms / 1000
		lat = append(lat, ms)
		// The collector this write is for: the collector itself, or the longest created name
		// that prefixes the object's name.
		name := ref.Name
		if ref.Resource != "opentelemetrycollectors" {
			if i := strings.Index(name, "-collector"); i > 0 {
				name = name[:i]
			}
		}
		k := ref.Namespace + "/" + name
		if _, ok := first[k]; !ok {
			first[k] = ev.Received
		}
		last[k] = ev.Done
		switch ref.Resource {
		case "deployments", "daemonsets", "statefulsets":
			if _, ok := workload[k]; !ok {
				workload[k] = ev.Done
			}
		}
	})
	if err != nil {
		return tl, err
	}
	var d1, d2, d3 []float64
	for k, c := range created {
		if t, ok := first[k]; ok {
			d1 = append(d1, t.Sub(c).Seconds())
		}
		if t, ok := workload[k]; ok {
			d2 = append(d2, t.Sub(c).Seconds())
		}
		if t, ok := last[k]; ok {
			d3 = append(d3, t.Sub(c).Seconds())
		}
	}
	tl.Collectors = len(created)
	tl.FirstWrite, tl.WorkloadWrite, tl.LastWrite = percentiles(d1), percentiles(d2), percentiles(d3)
	tl.WriteLatency = percentiles(lat)
	return tl, nil
}

func (tl timeline) String() string {
	return fmt.Sprintf("%d collectors; from create to the operator's first write: %s s; to the workload's: %s s; to the last: %s s; "+
		"%d operator writes, API server time per write %s ms (%.1f s in total); every client's writes by resource and verb: %s",
		tl.Collectors, tl.FirstWrite, tl.WorkloadWrite, tl.LastWrite, tl.Writes, tl.WriteLatency, tl.WriteSeconds, byCount(tl.ByAgentResource))
}

// profileCPU fetches a CPU profile of the operator (started with --pprof-addr=addr) over d into
// path, in the background; the returned function waits for it.
func profileCPU(ctx context.Context, addr string, d time.Duration, path string) func() error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
		defer cancel()
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("%s: %s", url, resp.Status)
			return
		}
		out, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(out, resp.Body)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return func() error { return <-done }
}

// decodeLines calls fn for every complete line of r.
func decodeLines(r io.Reader, fn func([]byte)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			fn(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// profileAPIServer fetches a CPU profile of kube-apiserver (started with --profiling=true) over d
// into path, in the background; the returned function waits for it.
func (b *bench) profileAPIServer(ctx context.Context, d time.Duration, path string) func() error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
		defer cancel()
		data, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		done <- err
	}()
	return func() error { return <-done }
}

// byCount gives "a 12, b 3", largest first.
func byCount(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
