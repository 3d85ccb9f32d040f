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
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/open-telemetry/opamp-go/protobufs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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
     OpenTelemetryCollector objects labelled opentelemetry.io/opamp-managed=true in --namespaces
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

func run(ctx context.Context, o options) (res *results, err error) {
	ctrllog.SetLogger(logr.Discard())
	if err := testenv.CheckAssets(); err != nil {
		return nil, err
	}
	root := testenv.RepoRoot()
	res = &results{
		Date: time.Now().Format("2006-01-02 15:04"), Tree: treeVersion(root), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Collectors: o.collectors, Namespaces: o.namespaces, Heartbeat: o.heartbeat.String(),
		LoadStart: procstat.LoadAvg(), Idle: o.idle.String(), After: o.after.String(),
	}
	defer func() { res.LoadEnd = procstat.LoadAvg() }()
	dir, err := os.MkdirTemp("", "bench-opampbridge-")
	if err != nil {
		return res, err
	}
	defer func() {
		if o.keep || err != nil {
			say("kept %s (bridge.log, remoteconfiguration.yaml, kubeconfig)", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()

	bin := o.bridge
	if bin == "" {
		bin = filepath.Join(dir, "operator-opamp-bridge")
		say("building ./cmd/operator-opamp-bridge")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "-ldflags", "-X main.version=bench", "./cmd/operator-opamp-bridge")
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return res, fmt.Errorf("building the bridge: %w", err)
		}
	}

	say("starting kube-apiserver and etcd (%s)", testenv.AssetsDir())
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		return res, err
	}
	defer func() {
		say("stopping the API server")
		if serr := env.Stop(); serr != nil {
			say("stopping the API server: %v", serr)
		}
	}()
	user, err := env.Environment.AddUser(envtest.User{Name: "opamp-bridge-bench", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return res, fmt.Errorf("adding the bridge's user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return res, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return res, err
	}

	const bridgeNS = "opamp-bridge"
	nss := []string{bridgeNS}
	for i := range o.namespaces {
		nss = append(nss, fmt.Sprintf("bench-%02d", i))
	}
	for _, ns := range nss {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return res, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	keys := make([]string, o.collectors)
	for i := range keys {
		keys[i] = fmt.Sprintf("bench-%02d/col-%04d", i%o.namespaces, i)
	}
	say("creating %d collectors in %d namespaces", o.collectors, o.namespaces)
	start := time.Now()
	if err := createCollectors(ctx, env.Client, keys, o.workers); err != nil {
		return res, err
	}
	say("created in %s", time.Since(start).Round(10*time.Millisecond))

	srv, err := opamptest.Start(opamptest.Options{})
	if err != nil {
		return res, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Stop(stopCtx)
	}()
	cfgPath := filepath.Join(dir, "remoteconfiguration.yaml")
	if err := os.WriteFile(cfgPath, []byte(bridgeConfig(srv.URL)), 0o600); err != nil {
		return res, err
	}
	listen, err := procstat.FreeAddr()
	if err != nil {
		return res, err
	}
	health, err := procstat.FreeAddr()
	if err != nil {
		return res, err
	}
	args := append([]string{"--config-file=" + cfgPath, "--kubeconfig-path=" + kubeconfig, "--name=opamp-bridge",
		"--listen-addr=" + listen, "--health-listen-addr=" + health, "--heartbeat-interval=" + o.heartbeat.String()},
		o.bridgeArgs...)
	logPath := filepath.Join(dir, "bridge.log")
	p, err := startBridge(bin, args, []string{"OTELCOL_NAMESPACE=" + bridgeNS}, logPath, health)
	if err != nil {
		return res, err
	}
	defer func() {
		say("stopping the bridge (pid %d)", p.pid())
		p.stop()
	}()
	say("bridge started (pid %d); OpAMP server %s; health %s; log %s", p.pid(), srv.URL, health, logPath)

	// 1. Connected, then every collector in the effective config.
	if err := waitFor(ctx, srv, p, o.timeout, "the bridge to connect", func(m map[string]*opamptest.AgentState) bool { return len(m) > 0 }); err != nil {
		return res, err
	}
	res.ConnectS = time.Since(p.started).Seconds()
	uids := srv.Agents()
	if len(uids) != 1 {
		return res, fmt.Errorf("want one agent on the OpAMP server, got %d", len(uids))
	}
	uid := uids[0]
	say("connected after %.2f s (instance %s)", res.ConnectS, uid)
	err = waitFor(ctx, srv, p, o.timeout, fmt.Sprintf("an effective config listing all %d collectors", o.collectors),
		func(m map[string]*opamptest.AgentState) bool { return hasAll(m[uid], keys, "") })
	if err != nil {
		return res, err
	}
	reported := time.Now()
	res.ReportS = reported.Sub(p.started).Seconds()
	res.ReportCPU, _ = p.cpuSeconds()
	a := srv.Agent(uid)
	res.ReportMessages = len(a.Messages)
	files := a.EffectiveConfig.GetConfigMap().GetConfigMap()
	if len(files) != o.collectors {
		return res, fmt.Errorf("the effective config lists %d files, want exactly %d", len(files), o.collectors)
	}
	for k, f := range files {
		res.EffConfigBytes += len(k) + len(f.GetBody())
		if len(f.GetBody()) == 0 || f.GetContentType() == "" {
			return res, fmt.Errorf("effective config file %s has an empty body or content type", k)
		}
	}
	res.done = 1
	say("effective config with all %d collectors after %.2f s (%d messages)", o.collectors, res.ReportS, res.ReportMessages)

	// 2. Idle.
	say("idling %s", o.idle)
	cpu0 := res.ReportCPU
	if err := sleepAlive(ctx, p, o.idle); err != nil {
		return res, err
	}
	idleEnd := time.Now()
	res.IdleRSSKiB, _, _ = p.rss.Window(reported.Add(o.idle/2), idleEnd)
	_, res.IdlePeakKiB, _ = p.rss.Window(p.started, idleEnd)
	heap, err := p.metric(ctx, "go_memstats_heap_inuse_bytes")
	if err != nil {
		return res, err
	}
	res.IdleHeapMiB = heap / (1 << 20)
	cpu1, _ := p.cpuSeconds()
	res.IdleCPU = cpu1 - cpu0
	res.done = 2
	say("idle RSS %s steady, %s peak", mib(res.IdleRSSKiB), mib(res.IdlePeakKiB))

	// 3. Remote config: one file per collector, each adding a receiver.
	remote := map[string]*protobufs.AgentConfigFile{}
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		remote[k] = &protobufs.AgentConfigFile{Body: collectorYAML(ns, name, "otlp", "otlp/2"), ContentType: "text/yaml"}
		res.RemoteBytes += len(k) + len(remote[k].Body)
	}
	res.LoadBeforeApply = procstat.LoadAvg()
	applySum0, _ := p.metric(ctx, "opamp_bridge_remote_config_apply_seconds_sum")
	say("pushing a %d-file remote config (%.1f KiB)", len(remote), float64(res.RemoteBytes)/1024)
	msgs0 := len(srv.Agent(uid).Messages)
	pushed := time.Now()
	hash, err := srv.PushConfig(ctx, uid, remote)
	if err != nil {
		return res, err
	}
	var st *protobufs.RemoteConfigStatus
	err = waitFor(ctx, srv, p, o.timeout, "the remote config status for the pushed hash", func(m map[string]*opamptest.AgentState) bool {
		s := m[uid].RemoteConfigStatus
		if s != nil && string(s.GetLastRemoteConfigHash()) == string(hash) &&
			s.GetStatus() != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING {
			st = s
			return true
		}
		return false
	})
	if err != nil {
		return res, err
	}
	applied := time.Now()
	res.ApplyS = applied.Sub(pushed).Seconds()
	if st.GetStatus() != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED {
		return res, fmt.Errorf("remote config status %s: %s", st.GetStatus(), firstLines(st.GetErrorMessage(), 10))
	}
	say("APPLIED after %.2f s", res.ApplyS)
	if err := waitFor(ctx, srv, p, o.timeout, "the effective config to show every change", func(m map[string]*opamptest.AgentState) bool {
		return hasAll(m[uid], keys, "otlp/2")
	}); err != nil {
		return res, err
	}
	res.ReflectS = time.Since(pushed).Seconds()
	for _, m := range srv.Agent(uid).Messages[msgs0:] {
		res.ApplyMessages++
		if m.EffectiveConfig != nil {
			res.ApplyEffConfigs++
		}
	}
	cpu2, _ := p.cpuSeconds()
	res.ApplyCPU = cpu2 - cpu1
	applySum1, err := p.metric(ctx, "opamp_bridge_remote_config_apply_seconds_sum")
	if err != nil {
		return res, err
	}
	res.ApplyBridgeS = applySum1 - applySum0
	if err := checkApplied(ctx, env.Client, keys); err != nil {
		return res, err
	}
	res.done = 3
	say("effective config updated after %.2f s; all %d collectors changed in the API server", res.ReflectS, len(keys))

	// 4. After the apply.
	say("idling %s", o.after)
	settled := time.Now()
	if err := sleepAlive(ctx, p, o.after); err != nil {
		return res, err
	}
	end := time.Now()
	res.AfterRSSKiB, _, _ = p.rss.Window(settled.Add(o.after/2), end)
	_, res.AfterPeakKiB, _ = p.rss.Window(pushed, end)
	if heap, err = p.metric(ctx, "go_memstats_heap_inuse_bytes"); err != nil {
		return res, err
	}
	res.AfterHeapMiB = heap / (1 << 20)
	cpu3, _ := p.cpuSeconds()
	res.AfterCPU = cpu3 - cpu2
	res.done = 4
	say("after the apply: RSS %s steady, %s peak", mib(res.AfterRSSKiB), mib(res.AfterPeakKiB))
	return res, nil
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
			return fmt.Errorf("timed out after %s waiting for %s\n%s", timeout, what, p.logTail(20))
		}
	}
}

func sleepAlive(ctx context.Context, p *bridgeProc, d time.Duration) error {
	select {
	case <-ctx.Done():
		return errors.New("interrupted")
	case <-p.exited:
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
    %s: "true"
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

func bridgeConfig(endpoint string) string {
	return fmt.Sprintf(`endpoint: %s
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
`, endpoint)
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
