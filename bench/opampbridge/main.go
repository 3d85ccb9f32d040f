// Command opampbridge benchmarks the OpAMP bridge daemon (cmd/operator-opamp-bridge) handling many
// OpenTelemetryCollector resources, with the bridge as a separate process so that its memory is the
// whole process's resident set: issue 6's figures (time to report the effective configuration after
// start, time to apply a remote configuration touching every collector, bridge RSS).
//
//	go run ./bench/opampbridge [flags]     (from the repository root; --help lists the flags)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/internal/testenv"
)

var t0 = time.Now()

func say(format string, args ...any) {
	d := time.Since(t0).Round(time.Second)
	fmt.Printf("[%02d:%02d] %s\n", int(d.Minutes()), int(d.Seconds())%60, fmt.Sprintf(format, args...))
}

type options struct {
	bridge     string
	collectors int
	namespaces int
	workers    int
	idle       time.Duration
	after      time.Duration
	heartbeat  time.Duration
	timeout    time.Duration
	keep       bool
	jsonOut    string
	bridgeArgs []string
}

func main() {
	var o options
	var extra string
	fs := flag.NewFlagSet("opampbridge", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: go run ./bench/opampbridge [flags]   (run from the repository root)

Benchmarks the OpAMP bridge (cmd/operator-opamp-bridge) with many collectors, the bridge running
as a separate process (its own binary, a config file and a kubeconfig, as in a cluster):
  1. starts kube-apiserver + etcd (internal/testenv, bin/k8s/<version>, CRDs from config/crd/bases;
     no controllers: collectors are only custom resources) and creates --collectors
     OpenTelemetryCollector objects labelled opentelemetry.io/opamp-managed=opamp-bridge in --namespaces
     namespaces;
  2. starts an OpAMP server (internal/opampbridge/opamptest, opamp-go's server package) and the
     bridge, and measures the time from exec to the first effective configuration that lists every
     collector;
  3. idles for --idle (bridge RSS: steady = median of the window's second half, peak = max since
     start; a heartbeat falls in it with the default --heartbeat-interval);
  4. pushes a remote configuration with one file per collector, each adding a receiver, and
     measures the time until the bridge reports APPLIED for its hash (then until its effective
     configuration shows the change, and checks every collector in the API server);
  5. idles for --after (RSS after the apply).
RSS is VmRSS of the bridge process from /proc/<pid>/status every 500 ms; CPU is utime+stime from
/proc/<pid>/stat. Everything listens on 127.0.0.1; every wait is bounded by --timeout; the bridge,
the OpAMP server and the API server are stopped at the end. Exit status is non-zero when a step fails.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.bridge, "bridge", "", "bridge binary; empty builds ./cmd/operator-opamp-bridge into a temporary folder")
	fs.IntVar(&o.collectors, "collectors", 500, "OpenTelemetryCollector objects labelled for the bridge")
	fs.IntVar(&o.namespaces, "namespaces", 10, "namespaces the collectors are spread over")
	fs.IntVar(&o.workers, "workers", 8, "concurrent requests this client uses to create the collectors")
	fs.DurationVar(&o.idle, "idle", 60*time.Second, "RSS window with all collectors reported, before the apply")
	fs.DurationVar(&o.after, "after", 60*time.Second, "RSS window after the remote configuration is applied")
	fs.DurationVar(&o.heartbeat, "heartbeat-interval", 30*time.Second, "the bridge's --heartbeat-interval (30s is its default)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "upper bound of every wait")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary folder (bridge log, config file, kubeconfig)")
	fs.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to this file")
	fs.StringVar(&extra, "bridge-args", "", "extra flags for the bridge, space-separated")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %v\n", fs.Args())
		os.Exit(2)
	}
	o.bridgeArgs = strings.Fields(extra)
	if o.collectors < 1 || o.namespaces < 1 || o.workers < 1 || o.idle <= 0 || o.after <= 0 || o.timeout <= 0 || o.heartbeat < 0 {
		fmt.Fprintln(os.Stderr, "--collectors, --namespaces, --workers, --idle, --after and --timeout must be positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, o)
	if res != nil {
		res.print()
		if o.jsonOut != "" {
			data, _ := json.MarshalIndent(res, "", "  ")
			if werr := os.WriteFile(o.jsonOut, append(data, '\n'), 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "writing --json:", werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAILED:", err)
		stop()
		os.Exit(1)
	}
}

// results are the figures of one run.
type results struct {
	Date            string  `json:"date"`
	Tree            string  `json:"tree"`
	GoVersion       string  `json:"goVersion"`
	CPUs            int     `json:"cpus"`
	Collectors      int     `json:"collectors"`
	Namespaces      int     `json:"namespaces"`
	Heartbeat       string  `json:"heartbeatInterval"`
	LoadStart       string  `json:"loadAverageStart"`
	LoadBeforeApply string  `json:"loadAverageBeforeApply"`
	LoadEnd         string  `json:"loadAverageEnd"`
	ConnectS        float64 `json:"secondsToConnect"`
	ReportS         float64 `json:"secondsToReportAll"`
	ReportMessages  int     `json:"messagesUntilReportAll"`
	ReportCPU       float64 `json:"cpuSecondsUntilReportAll"`
	EffConfigBytes  int     `json:"effectiveConfigBytes"`
	IdleRSSKiB      int64   `json:"idleRssSteadyKiB"`
	IdlePeakKiB     int64   `json:"idleRssPeakKiB"`
	IdleHeapMiB     float64 `json:"idleGoHeapInuseMiB"`
	IdleCPU         float64 `json:"cpuSecondsIdle"`
	RemoteBytes     int     `json:"remoteConfigBytes"`
	ApplyS          float64 `json:"secondsToApplied"`
	ApplyBridgeS    float64 `json:"bridgeApplySeconds"`
	ApplyCPU        float64 `json:"cpuSecondsApply"`
	ApplyMessages   int     `json:"messagesDuringApply"`
	ApplyEffConfigs int     `json:"effectiveConfigsDuringApply"`
	ReflectS        float64 `json:"secondsToEffectiveConfigUpdated"`
	AfterRSSKiB     int64   `json:"afterRssSteadyKiB"`
	AfterPeakKiB    int64   `json:"afterRssPeakKiB"`
	AfterHeapMiB    float64 `json:"afterGoHeapInuseMiB"`
	AfterCPU        float64 `json:"cpuSecondsAfter"`
	Idle            string  `json:"idleWindow"`
	After           string  `json:"afterWindow"`
	done            int     // how many steps completed, for printing partial results
}

func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

func (r *results) print() {
	fmt.Printf("\nOpAMP bridge with %d collectors (%d namespaces), %s, %s, %d CPUs, heartbeat %s\n",
		r.Collectors, r.Namespaces, r.Tree, r.GoVersion, r.CPUs, r.Heartbeat)
	fmt.Printf("load average: %s at start, %s before the apply, %s at the end\n\n", r.LoadStart, r.LoadBeforeApply, r.LoadEnd)
	fmt.Println("| figure | value |")
	fmt.Println("| --- | --- |")
	row := func(k, v string) { fmt.Printf("| %s | %s |\n", k, v) }
	if r.done >= 1 {
		row("time from exec to connected (first AgentToServer)", fmt.Sprintf("%.2f s", r.ConnectS))
		row(fmt.Sprintf("time from exec to an effective config listing all %d collectors", r.Collectors),
			fmt.Sprintf("**%.2f s** (%d messages, %.1f KiB of config, %.2f CPU-s)", r.ReportS, r.ReportMessages, float64(r.EffConfigBytes)/1024, r.ReportCPU))
	}
	if r.done >= 2 {
		row(fmt.Sprintf("RSS idle with %d collectors (%s window)", r.Collectors, r.Idle),
			fmt.Sprintf("**%s steady, %s peak** (Go heap in use %.1f MiB; %.2f CPU-s in the window)", mib(r.IdleRSSKiB), mib(r.IdlePeakKiB), r.IdleHeapMiB, r.IdleCPU))
	}
	if r.done >= 3 {
		row(fmt.Sprintf("time to apply a %d-file remote config until APPLIED", r.Collectors),
			fmt.Sprintf("**%.2f s** (bridge's own apply histogram: %.2f s; %.1f KiB pushed; %.2f CPU-s)", r.ApplyS, r.ApplyBridgeS, float64(r.RemoteBytes)/1024, r.ApplyCPU))
		row("… until the effective config shows every change", fmt.Sprintf("%.2f s after the push", r.ReflectS))
		row("AgentToServer messages from the push until then", fmt.Sprintf("%d (%d of them carrying the whole effective config)", r.ApplyMessages, r.ApplyEffConfigs))
	}
	if r.done >= 4 {
		row(fmt.Sprintf("RSS after the apply (%s window)", r.After),
			fmt.Sprintf("**%s steady, %s peak** since the push (Go heap in use %.1f MiB; %.2f CPU-s in the window)", mib(r.AfterRSSKiB), mib(r.AfterPeakKiB), r.AfterHeapMiB, r.AfterCPU))
	}
}

// run starts the API server, the OpAMP server and the bridge, then measures its steps in order;
// res holds the figures of the steps that completed, also when one fails.
func run(ctx context.Context, o options) (res *results, err error) {
	ctrllog.SetLogger(logr.Discard())
	if err := testenv.CheckAssets(); err != nil {
		return nil, err
	}
	b := &bench{o: o, root: testenv.RepoRoot()}
	b.res = newResults(o, b.root)
	res = b.res
	defer func() { res.LoadEnd = procstat.LoadAvg() }()
	if b.dir, err = os.MkdirTemp("", "bench-opampbridge-"); err != nil {
		return res, err
	}
	defer func() {
		if o.keep || err != nil {
			say("kept %s (bridge.log, remoteconfiguration.yaml, kubeconfig)", b.dir)
			return
		}
		_ = os.RemoveAll(b.dir)
	}()
	defer b.cleanup()
	steps := []func(context.Context) error{
		b.buildBridge, b.startAPIServer, b.createCollectors, b.startBridge,
		b.measureReport, b.measureIdle, b.measureApply, b.measureAfter,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// newResults are the figures known before the run starts: the machine, the tree and the options.
func newResults(o options, root string) *results {
	return &results{
		Date: time.Now().Format("2006-01-02 15:04"), Tree: treeVersion(root), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Collectors: o.collectors, Namespaces: o.namespaces, Heartbeat: o.heartbeat.String(),
		LoadStart: procstat.LoadAvg(), Idle: o.idle.String(), After: o.after.String(),
	}
}

// waitFor waits for cond on the server's agents, failing early when the bridge exits or ctx ends.
func waitFor(ctx context.Context, srv *opamptest.Server, p *bridgeProc, timeout time.Duration, what string, cond func(map[string]*opamptest.AgentState) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if srv.Wait(time.Second, what, cond) == nil {
			return nil
		}
		if err := p.alive(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while waiting for %s", what)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s\n%s", timeout, what, p.Tail(20))
		}
	}
}

func sleepAlive(ctx context.Context, p *bridgeProc, d time.Duration) error {
	select {
	case <-ctx.Done():
		return errors.New("interrupted")
	case <-p.Done():
		return p.alive()
	case <-time.After(d):
		return p.alive()
	}
}

// hasAll reports whether a's effective config has a file for every key, each containing want.
func hasAll(a *opamptest.AgentState, keys []string, want string) bool {
	if a == nil {
		return false
	}
	files := a.EffectiveConfig.GetConfigMap().GetConfigMap()
	if len(files) < len(keys) {
		return false
	}
	for _, k := range keys {
		f, ok := files[k]
		if !ok || (want != "" && !strings.Contains(string(f.GetBody()), want)) {
			return false
		}
	}
	return true
}

// collectorYAML is a small deployment-mode collector labelled for the bridge (OTLP -> debug).
func collectorYAML(ns, name string, receivers ...string) []byte {
	var recv strings.Builder
	for _, r := range receivers {
		fmt.Fprintf(&recv, "      %s: {protocols: {grpc: {}, http: {}}}\n", r)
	}
	return fmt.Appendf(nil, `apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: %s
  namespace: %s
  labels:
    %s: opamp-bridge
spec:
  mode: deployment
  upgradeStrategy: automatic
  config:
    receivers:
%s    processors:
      batch: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [%s], processors: [batch], exporters: [debug]}
`, name, ns, collectors.ManagedLabel, recv.String(), strings.Join(receivers, ", "))
}

// bridgeConfig is the bridge's configuration file: the collectors' namespaces are listed, since
// a bridge changes collectors of its own namespace only unless told (and each collector names
// the bridge, opamp-bridge, in its managed label).
func bridgeConfig(endpoint string, namespaces []string) string {
	return fmt.Sprintf(`endpoint: %s
namespaces: [%s]
capabilities:
  AcceptsRemoteConfig: true
  ReportsEffectiveConfig: true
  ReportsHealth: true
  ReportsRemoteConfig: true
  AcceptsRestartCommand: true
componentsAllowed:
  receivers: [otlp]
  processors: [batch]
  exporters: [debug]
`, endpoint, strings.Join(namespaces, ", "))
}

func createCollectors(ctx context.Context, c client.Client, keys []string, workers int) error {
	work := make(chan string)
	errs := make(chan error, len(keys))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range work {
				ns, name, _ := strings.Cut(k, "/")
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(collectorYAML(ns, name, "otlp"), &u.Object); err != nil {
					errs <- err
					continue
				}
				if err := c.Create(ctx, u); err != nil {
					errs <- fmt.Errorf("creating collector %s: %w", k, err)
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// checkApplied verifies in the API server that every collector has the pushed receiver.
func checkApplied(ctx context.Context, c client.Client, keys []string) error {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("opentelemetry.io/v1beta1")
	l.SetKind("OpenTelemetryCollectorList")
	if err := c.List(ctx, l); err != nil {
		return err
	}
	changed := 0
	for _, it := range l.Items {
		k := it.GetNamespace() + "/" + it.GetName()
		if !want[k] {
			continue
		}
		if _, ok, _ := unstructured.NestedMap(it.Object, "spec", "config", "receivers", "otlp/2"); ok {
			changed++
		}
	}
	if changed != len(keys) {
		return fmt.Errorf("only %d of %d collectors have the pushed receiver otlp/2", changed, len(keys))
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// treeVersion is the short commit of the repository, with +dirty when files are modified.
func treeVersion(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown tree"
	}
	v := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		v += "+dirty"
	}
	return "tree " + v
}
