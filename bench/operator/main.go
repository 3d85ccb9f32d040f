// Command operator benchmarks the operator on the simulated cluster (test/simcluster) the same way
// upstream's figures in the design docs were measured: the operator runs as a separate local process
// with its webhooks, its memory is the whole process's VmRSS from /proc, and its API writes are
// counted from the API server's audit log by user agent.
//
//	go run ./bench/operator [flags]     (from the repository root; --help lists the flags)
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/bench/internal/procstat"
)

var t0 = time.Now()

func say(format string, args ...any) {
	d := time.Since(t0).Round(time.Second)
	fmt.Printf("[%02d:%02d] %s\n", int(d.Minutes()), int(d.Seconds())%60, fmt.Sprintf(format, args...))
}

type config struct {
	operator    string
	scenarios   []string
	noise       int
	extraNoise  int
	issueNoise  int
	collectors  int
	colNS       int
	idle        time.Duration
	syncPeriod  time.Duration
	settle      time.Duration
	timeout     time.Duration
	workers     int
	crds        string
	webhooks    string
	keep        bool
	jsonOut     string
	operatorArg []string
	catchup     catchupResult

	scaleCollectors int
	scaleNodes      int
	churnCollectors int
	sidecarApps     int
	mcrValues       []int
	mcrCollectors   int
	bigNoise        int
	cpuProfile      string
	// endpointControllers keeps kube-controller-manager's endpoint controllers on (scale, mcr).
	endpointControllers bool
	// floorAll adds a second floor with every object the operator made (scale, mcr).
	floorAll   bool
	apiProfile string
	profileFor time.Duration
}

const usage = `Usage: go run ./bench/operator [flags]   (run from the repository root)

Benchmarks the operator on a simulated cluster (test/simcluster: etcd, kube-apiserver with an audit
log, controller-manager, scheduler, kwok with 3 fake nodes), measured the way upstream's figures in
the design docs (PAIN-POINTS.md, last section) were, and prints them side by side:
  - operator RSS (whole process, /proc/<pid>/status VmRSS every 500ms; steady = median, peak = max)
    with N unrelated ConfigMaps/Secrets/Pods (~2 KB each) and no collectors;
  - time from creating the collectors (deployment mode, OTLP -> debug) to all their Deployments
    Available and to all collectors Ready=True, and RSS after convergence;
  - the floor: the same Deployments created directly by this client, until Available;
  - API writes by the operator (audit log, userAgent "opentelemetry-operator*",
    create/update/patch/delete) while idling, by resource and verb; the same with
    --sync-period (writes per resync, with the reconcile count from the operator's /metrics);
  - with --extra-noise, RSS after adding more unrelated objects and restarting the operator.
Scenarios (each on a fresh cluster):
  upstream  --noise objects, collectors, idle, floor, then --extra-noise more objects (upstream's rows)
  issue     --issue-noise objects + collectors (the figures issue 5 asks for)
  catchup   --catchup-pods pods asking for instrumentation, created while the operator is down: RSS
            with the instrumentation catch-up controller off and on, scan cost, time to report
  scale     --scale-collectors collectors in turn deployment, daemonset, statefulset and sidecar mode
            on an empty cluster: time to every workload Available and every collector Ready,
            writes per collector, RSS; --sidecar-apps Deployments that ask for a sidecar; the floor
            (each workload with its ServiceAccount and ConfigMap created directly) on a fresh cluster
  churn     on the scale cluster (after scale's convergence; alone: the same steps without the
            floor): change the configuration of --churn-collectors collectors at once, time until
            every workload has rolled out pods that mount the new ConfigMap
  mcr       the --max-concurrent-reconciles study: for each of --mcr-values, a fresh cluster and
            --mcr-collectors mixed-mode collectors; then one floor
  bignoise  RSS with --big-noise unrelated objects (no collectors, then 100 collectors converged)
Everything listens on loopback; every wait is bounded by --timeout; the operator and the cluster are
stopped at the end. Exit status is non-zero when any step fails.

Flags:
`

func main() {
	var cfg config
	var scenarios, extra string
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.operator, "operator", "", "operator binary; empty builds ./cmd/opentelemetry-operator into a temporary folder")
	fs.StringVar(&scenarios, "scenarios", "upstream,issue", "comma-separated scenarios to run: upstream, issue, catchup, scale, churn, mcr, bignoise")
	mcr := scaleFlags(fs, &cfg)
	fs.IntVar(&cfg.catchup.Pods, "catchup-pods", 10000, "catchup scenario: pods that ask for Java instrumentation, created while the operator is down")
	fs.IntVar(&cfg.catchup.Deployments, "catchup-deployments", 100, "catchup scenario: Deployments the pods belong to")
	fs.IntVar(&cfg.catchup.Namespaces, "catchup-namespaces", 20, "catchup scenario: namespaces, each with one Instrumentation")
	fs.Float64Var(&cfg.catchup.ScanInterval, "catchup-scan-interval", 10, "catchup scenario: the operator's --instrumentation-scan-interval, in seconds")
	fs.IntVar(&cfg.noise, "noise", 9000, "upstream scenario: unrelated objects before the operator starts (a third each ConfigMaps, Secrets, Pods)")
	fs.IntVar(&cfg.extraNoise, "extra-noise", 9000, "upstream scenario: unrelated objects added after convergence, then the operator is restarted (0 skips)")
	fs.IntVar(&cfg.issueNoise, "issue-noise", 5000, "issue scenario: unrelated objects")
	fs.IntVar(&cfg.collectors, "collectors", 100, "deployment-mode collectors to create")
	fs.IntVar(&cfg.colNS, "collector-namespaces", 10, "namespaces the collectors are spread over")
	fs.DurationVar(&cfg.idle, "idle", 120*time.Second, "idle window in which the operator's writes are counted (once with default flags, once with --sync-period)")
	fs.DurationVar(&cfg.syncPeriod, "sync-period", 10*time.Second, "the operator's --sync-period for the resync window (0 skips that window)")
	fs.DurationVar(&cfg.settle, "settle", 30*time.Second, "how long to sample RSS after the operator starts or noise is added (steady = median of its second half)")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "upper bound of every wait (noise pods Running, convergence, floor)")
	fs.IntVar(&cfg.workers, "workers", 8, "concurrent requests this client uses to create objects")
	fs.StringVar(&cfg.crds, "crds", "config/crd/bases", "CRDs to install")
	fs.StringVar(&cfg.webhooks, "webhooks", "config/webhook/manifests.yaml", "webhook configurations to register")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the cluster's folder (logs, audit log) after the run")
	fs.StringVar(&cfg.jsonOut, "json", "", "also write the results as JSON to this file")
	fs.StringVar(&extra, "operator-args", "", "extra flags for the operator, space-separated")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	cfg.scenarios = strings.Split(scenarios, ",")
	cfg.operatorArg = strings.Fields(extra)
	known := map[string]bool{"upstream": true, "issue": true, "catchup": true, "scale": true, "churn": true, "mcr": true, "bignoise": true}
	for _, s := range cfg.scenarios {
		if !known[s] {
			fmt.Fprintf(os.Stderr, "unknown scenario %q (want upstream, issue, catchup, scale, churn, mcr, bignoise)\n", s)
			os.Exit(2)
		}
	}
	for _, v := range strings.Split(*mcr, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "--mcr-values: %q is not a positive number\n", v)
			os.Exit(2)
		}
		cfg.mcrValues = append(cfg.mcrValues, n)
	}
	if cfg.collectors < 1 || cfg.colNS < 1 || cfg.workers < 1 || cfg.idle <= 0 || cfg.timeout <= 0 {
		fmt.Fprintln(os.Stderr, "--collectors, --collector-namespaces, --workers, --idle and --timeout must be positive")
		os.Exit(2)
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "\nFAILED: %v\n", err)
		cancel()
		os.Exit(1)
	}
}

type results struct {
	Machine   machine           `json:"machine"`
	Scenarios []*scenarioResult `json:"scenarios"`
	Catchup   *catchupResult    `json:"catchup,omitempty"`
	Scale     []*scaleResult    `json:"scale,omitempty"`
}

type machine struct {
	CPUs         int    `json:"cpus"`
	MemTotal     string `json:"mem_total"`
	LoadStart    string `json:"loadavg_start"`
	LoadEnd      string `json:"loadavg_end"`
	GoVersion    string `json:"go_version"`
	Commit       string `json:"commit"`
	OperatorArgs string `json:"operator_args,omitempty"`
	Started      string `json:"started"`
}

func run(ctx context.Context, cfg config) error {
	for _, p := range []string{cfg.crds, cfg.webhooks, "test/simcluster"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: %w (run from the repository root)", p, err)
		}
	}
	res := &results{Machine: machine{CPUs: runtime.NumCPU(), MemTotal: procstat.MemTotal(), LoadStart: procstat.LoadAvg(),
		GoVersion: runtime.Version(), Commit: gitCommit(), OperatorArgs: strings.Join(cfg.operatorArg, " "),
		Started: time.Now().UTC().Format(time.RFC3339)}}
	if cfg.operator == "" {
		dir, err := os.MkdirTemp("", "bench-operator-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.operator = filepath.Join(dir, "opentelemetry-operator")
		say("building ./cmd/opentelemetry-operator (%s)", res.Machine.Commit)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", cfg.operator, "./cmd/opentelemetry-operator")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the operator: %w", err)
		}
	} else if abs, err := filepath.Abs(cfg.operator); err == nil {
		cfg.operator = abs
	}
	if _, err := os.Stat(cfg.operator); err != nil {
		return err
	}
	var runErr error
	for _, name := range cfg.scenarios {
		if runErr = runOne(ctx, cfg, res, name); runErr != nil {
			runErr = fmt.Errorf("scenario %s: %w", name, runErr)
			break
		}
	}
	res.Machine.LoadEnd = procstat.LoadAvg()
	fmt.Println()
	printTables(os.Stdout, res)
	if res.Catchup != nil {
		printCatchup(os.Stdout, res.Catchup)
	}
	printScale(os.Stdout, res.Scale)
	if cfg.jsonOut != "" {
		data, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(cfg.jsonOut, append(data, '\n'), 0o644); err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}

// scaleFlags registers the scale, churn, mcr and bignoise scenarios' flags; it returns where
// --mcr-values goes.
func scaleFlags(fs *flag.FlagSet, cfg *config) *string {
	mcr := new(string)
	fs.IntVar(&cfg.scaleCollectors, "scale-collectors", 1000, "scale and churn scenarios: collectors, a quarter each deployment, daemonset, statefulset, sidecar")
	fs.IntVar(&cfg.scaleNodes, "scale-nodes", 0, "scale, churn and mcr scenarios: fake nodes (0: one per 100 Deployment and StatefulSet pods, plus 2)")
	fs.IntVar(&cfg.churnCollectors, "churn-collectors", 100, "churn scenario: collectors (with a workload) whose configuration changes at once")
	fs.IntVar(&cfg.sidecarApps, "sidecar-apps", 10, "scale scenario: Deployments whose pods ask for a sidecar collector (0 skips)")
	fs.StringVar(mcr, "mcr-values", "4,8,16", "mcr scenario: the operator's --max-concurrent-reconciles values to compare")
	fs.IntVar(&cfg.mcrCollectors, "mcr-collectors", 100, "mcr scenario: mixed-mode collectors per run")
	fs.IntVar(&cfg.bigNoise, "big-noise", 50000, "bignoise scenario: unrelated objects")
	fs.StringVar(&cfg.cpuProfile, "cpu-profile", "", "scale and mcr scenarios: write a CPU profile of the operator (started with --pprof-addr on loopback) over --cpu-profile-for from the first create to this file")
	fs.BoolVar(&cfg.endpointControllers, "endpoint-controllers", false, "scale, churn and mcr scenarios: keep kube-controller-manager's Endpoints and EndpointSlice controllers on; off by default, because kwok's loopback pod IPs make every endpoint write of every collector Service fail and be retried with Warning Events")
	fs.BoolVar(&cfg.floorAll, "floor-all", false, "scale and mcr scenarios: a second floor, on another fresh cluster, that also creates each workload's Services, PodDisruptionBudget and NetworkPolicy (every object the operator made for it), for the operator's cost over its own objects")
	fs.StringVar(&cfg.apiProfile, "apiserver-profile", "", "scale and mcr scenarios: write a CPU profile of kube-apiserver (started with --profiling) over --cpu-profile-for from the first create to this file")
	fs.DurationVar(&cfg.profileFor, "cpu-profile-for", 30*time.Second, "length of the --cpu-profile")
	return mcr
}

// runOne runs one scenario and adds its results to res.
func runOne(ctx context.Context, cfg config, res *results, name string) error {
	switch name {
	case "catchup":
		c := cfg.catchup
		res.Catchup = &c
		say("=== scenario catchup: %d pods of %d Deployments in %d namespaces ===", c.Pods, c.Deployments, c.Namespaces)
		return runCatchup(ctx, cfg, res.Catchup)
	case "scale", "churn":
		if name == "churn" && hasScenario(cfg, "scale") {
			return nil // runs on the scale scenario's cluster
		}
		s := &scaleResult{Name: name}
		res.Scale = append(res.Scale, s)
		say("=== scenario %s: %d mixed-mode collectors ===", name, cfg.scaleCollectors)
		return runScale(ctx, cfg, s, scalePlan{collectors: cfg.scaleCollectors, churn: hasScenario(cfg, "churn"),
			floor: name == "scale", sidecars: true})
	case "mcr":
		for j, v := range cfg.mcrValues {
			s := &scaleResult{Name: fmt.Sprintf("mcr-%d", v)}
			res.Scale = append(res.Scale, s)
			say("=== scenario mcr: %d mixed-mode collectors, --max-concurrent-reconciles=%d ===", cfg.mcrCollectors, v)
			plan := scalePlan{collectors: cfg.mcrCollectors, floor: j == len(cfg.mcrValues)-1,
				opArgs: []string{"--max-concurrent-reconciles=" + strconv.Itoa(v)}}
			if err := runScale(ctx, cfg, s, plan); err != nil {
				return err
			}
		}
		return nil
	}
	s := &scenarioResult{Name: name, Collectors: cfg.collectors}
	switch name {
	case "upstream":
		s.Noise, s.ExtraNoise = cfg.noise, cfg.extraNoise
	case "issue":
		s.Noise = cfg.issueNoise
	case "bignoise":
		s.Noise = cfg.bigNoise
	}
	res.Scenarios = append(res.Scenarios, s)
	say("=== scenario %s: %d unrelated objects, %d collectors ===", name, s.Noise, s.Collectors)
	return runScenario(ctx, cfg, s)
}

func hasScenario(cfg config, name string) bool {
	for _, s := range cfg.scenarios {
		if s == name {
			return true
		}
	}
	return false
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", "cmd", "internal", "api").Output(); err == nil && len(st) > 0 {
		c += "+dirty"
	}
	return c
}
