// Command apicost measures what each kind of API request the operator sends costs the cluster in
// CPU: kube-apiserver and etcd seconds per request, read from /proc while a batch of one kind runs
// against a fresh simulated cluster (no operator, no webhooks). It explains the converge figures of
// bench/operator: where the operator's path costs more than the floor's direct creates.
//
//	go run ./bench/apicost                      # after `make cluster-tools`; about a minute
//	go run ./bench/apicost --requests=2000 --cpu-profile=/tmp/api.pprof --profile-kind="collector status"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/test/simcluster"
)

type config struct {
	requests, workers int
	crds              string
	profile, profKind string
}

func main() {
	var cfg config
	fs := flag.NewFlagSet("apicost", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `apicost: CPU of kube-apiserver and etcd per request, by kind of request.

Starts a simulated cluster (1 fake node; kube-controller-manager without its endpoint
controllers, as in bench/operator), installs the CRDs, then sends --requests requests of each
kind, --workers at a time, and reads the processes' CPU seconds before and after each batch
(plus 2 s for the work a batch leaves behind: watch fan-out, controllers), less what they spend
idle (measured first). Nothing else runs, so the difference is the batch's. ClusterIP Services are measured in alternating chunks of create
and server-side apply, because allocating a ClusterIP costs more the more are allocated.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.requests, "requests", 1000, "requests per kind")
	fs.IntVar(&cfg.workers, "workers", 8, "concurrent requests")
	fs.StringVar(&cfg.crds, "crds", "config/crd/bases", "CRDs to install")
	fs.StringVar(&cfg.profile, "cpu-profile", "", "write a CPU profile of kube-apiserver during the kind --profile-kind to this file")
	fs.StringVar(&cfg.profKind, "profile-kind", "", "the kind (a prefix of its name) to profile")
	_ = fs.Parse(os.Args[1:])
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "apicost:", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Printf("[%s] %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, cfg config) error {
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: 1, Progress: say,
		ControllerManagerArgs: []string{"--controllers=-endpoints-controller,-endpointslice-controller"},
		APIServerArgs:         []string{"--profiling=" + fmt.Sprint(cfg.profile != "")}})
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	if _, err := simcluster.InstallCRDs(ctx, c.Config, cfg.crds, "apicost"); err != nil {
		return err
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	rc := rest.CopyConfig(c.Config)
	rc.QPS = -1 // no client-side rate limit: the batch runs at the API server's pace
	cl, err := client.New(rc, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // the namespace's service account and the CRDs' discovery settle
	// What the processes spend idle (leases, watches' bookmarks, controllers' resyncs) is
	// measured first and taken off each batch's figure.
	before := cpu(c)
	time.Sleep(idleWindow)
	idle := map[string]float64{}
	for p, v := range cpu(c) {
		idle[p] = (v - before[p]) / idleWindow.Seconds()
	}
	say("idle: kube-apiserver %.1f ms/s, etcd %.1f ms/s", 1000*idle["kube-apiserver"], 1000*idle["etcd"])
	r := &requests{ctx: ctx, c: cl}
	var rows []row
	for _, k := range kinds(r) {
		say("%s: %d requests, %d at a time", k.name, cfg.requests, cfg.workers)
		var prof func() error
		if cfg.profile != "" && cfg.profKind != "" && strings.HasPrefix(k.name, cfg.profKind) {
			prof = profile(ctx, c, cfg.profile)
		}
		got, err := measure(ctx, c, cfg, k, idle)
		if err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
		if prof != nil {
			if err := prof(); err != nil {
				return fmt.Errorf("profile: %w", err)
			}
			say("CPU profile of kube-apiserver: %s", cfg.profile)
		}
		rows = append(rows, got...)
	}
	fmt.Printf("\nMachine: %d CPUs, %s RAM, load average %s; %s; %d requests per kind, %d at a time\n\n",
		goruntime.NumCPU(), procstat.MemTotal(), procstat.LoadAvg(), goruntime.Version(), cfg.requests, cfg.workers)
	fmt.Println("| request | per second | kube-apiserver ms | etcd ms | every process ms |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		fmt.Printf("| %s | %.0f | %.2f | %.2f | %.2f |\n", r.name, r.rate, r.apiserver, r.etcd, r.all)
	}
	return nil
}

// row is one kind's cost per request, in CPU milliseconds.
type row struct {
	name                 string
	rate                 float64
	apiserver, etcd, all float64
}

// idleWindow is how long the idle baseline is measured.
const idleWindow = 5 * time.Second

// settle is how long after a batch its CPU is still counted (the work it leaves behind).
const settle = 2 * time.Second

// measure runs k's requests and returns its rows (two for an alternating kind), with the idle
// CPU rate (seconds per second, by process) taken off.
func measure(ctx context.Context, c *simcluster.Cluster, cfg config, k kind, idle map[string]float64) ([]row, error) {
	if k.alt == nil {
		before := cpu(c)
		start := time.Now()
		el, err := batch(ctx, cfg, 0, cfg.requests, k.fn)
		time.Sleep(settle)
		if err != nil {
			return nil, err
		}
		used := since(before, cpu(c), idle, time.Since(start))
		return []row{cost(k.name, cfg.requests, el, used)}, nil
	}
	// Alternating chunks: both kinds see the same growing number of allocated addresses.
	const chunk = 50
	var tA, tB time.Duration
	sumA, sumB := map[string]float64{}, map[string]float64{}
	for from := 0; from < cfg.requests; from += chunk {
		to := min(from+chunk, cfg.requests)
		for i, fn := range []func(int) error{k.fn, k.alt} {
			before := cpu(c)
			start := time.Now()
			el, err := batch(ctx, cfg, from, to, fn)
			if err != nil {
				return nil, err
			}
			time.Sleep(settle / 4)
			sum, t := sumA, &tA
			if i == 1 {
				sum, t = sumB, &tB
			}
			*t += el
			for p, v := range since(before, cpu(c), idle, time.Since(start)) {
				sum[p] += v
			}
		}
	}
	return []row{cost(k.name, cfg.requests, tA, sumA), cost(k.altName, cfg.requests, tB, sumB)}, nil
}

// since is the CPU seconds each process used between two samples d apart, less its idle rate.
func since(before, after, idle map[string]float64, d time.Duration) map[string]float64 {
	used := map[string]float64{}
	for p, v := range after {
		used[p] = v - before[p] - idle[p]*d.Seconds()
	}
	return used
}

// batch sends requests from..to-1 of fn, cfg.workers at a time, and returns how long they took.
func batch(ctx context.Context, cfg config, from, to int, fn func(int) error) (time.Duration, error) {
	start := time.Now()
	err := parallel.Run(ctx, to-from, cfg.workers, func(_ context.Context, i int) error { return fn(from + i) })
	return time.Since(start), err
}

// cost turns the CPU seconds a batch of n requests used into milliseconds per request.
func cost(name string, n int, el time.Duration, used map[string]float64) row {
	per := func(p string) float64 { return 1000 * used[p] / float64(n) }
	all := 0.0
	for p := range used {
		all += per(p)
	}
	return row{name: name, rate: float64(n) / el.Seconds(), apiserver: per("kube-apiserver"), etcd: per("etcd"), all: all}
}

// cpu is the CPU seconds of each of the cluster's processes, by name.
func cpu(c *simcluster.Cluster) map[string]float64 { return procstat.CPUByName(c.PIDs()) }

// profile starts a 3-second CPU profile of kube-apiserver; the returned func waits and writes it.
func profile(ctx context.Context, c *simcluster.Cluster, path string) func() error {
	done := make(chan error, 1)
	go func() {
		data, err := kubernetes.NewForConfigOrDie(c.Config).CoreV1().RESTClient().Get().
			AbsPath("/debug/pprof/profile").Param("seconds", "3").DoRaw(ctx)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		done <- err
	}()
	return func() error { return <-done }
}
