// Command podwebhook measures the admission latency of the operator's pod webhook
// (/mutate-v1-pod, mpod.kb.io) on the simulated cluster against its floor: a webhook that answers
// every review allowed with no patch (floor.go), served on 127.0.0.1 in the same run, for pods in
// namespaces of its own. Pods are created directly by a client in three cases (no annotation, a
// collector sidecar, Java auto-instrumentation with a ReplicaSet owner, so the owner chain is
// read), each case for both webhooks, interleaved. Each webhook call's duration is the API
// server's own "Call mutating webhook" trace span (its tracing exported to an OTLP receiver on
// loopback, spans.go); the apiserver_admission_webhook_admission_duration_seconds histogram,
// whose buckets are 5, 25 and 100 ms, is printed as a cross-check.
//
//	go run ./bench/podwebhook [flags]     (from the repository root; --help lists the flags)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

var t0 = time.Now()

func say(format string, args ...any) {
	d := time.Since(t0).Round(time.Second)
	fmt.Printf("[%02d:%02d] %s\n", int(d.Minutes()), int(d.Seconds())%60, fmt.Sprintf(format, args...))
}

type config struct {
	operator    string
	pods        int
	concurrency int
	timeout     time.Duration
	keep        bool
	pprofPort   int
	cpuProfile  string
	profileFor  time.Duration
}

func main() {
	var cfg config
	fs := flag.NewFlagSet("podwebhook", flag.ContinueOnError)
	fs.StringVar(&cfg.operator, "operator", "bin/opentelemetry-operator", "operator binary (built with `make build`); built into a temporary folder when missing")
	fs.IntVar(&cfg.pods, "pods", 500, "pods created per case")
	fs.IntVar(&cfg.concurrency, "concurrency", 1, "concurrent pod creations (1: one after the other, as the baseline was measured)")
	fs.DurationVar(&cfg.timeout, "timeout", 3*time.Minute, "bound of every wait")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the cluster's folder (logs) after the run")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write the operator's CPU profile of the measured phase's first --profile-for to this file, the API server's to this file + .apiserver (go tool pprof reads them)")
	fs.DurationVar(&cfg.profileFor, "profile-for", 20*time.Second, "length of the --cpuprofile profile")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "podwebhook:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	bin, cleanup, err := operatorBinary(ctx, cfg.operator)
	if err != nil {
		return err
	}
	defer cleanup()
	sink, err := startSpanSink()
	if err != nil {
		return err
	}
	defer sink.stop()
	tmp, err := os.MkdirTemp("", "podwebhook-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	tracing, err := sink.tracingConfig(tmp)
	if err != nil {
		return err
	}
	apiServerArgs := []string{tracing}
	if cfg.cpuProfile != "" {
		apiServerArgs = append(apiServerArgs, "--profiling=true") // simcluster turns it off
	}
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: 1, KeepDir: cfg.keep, Progress: say, APIServerArgs: apiServerArgs})
	if err != nil {
		return err
	}
	defer func() {
		if cfg.keep {
			say("cluster folder kept: %s", c.Keep())
		}
		_ = c.Stop()
	}()
	if _, err := simcluster.InstallCRDs(ctx, c.Config, "config/crd/bases", "bench"); err != nil {
		return err
	}
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	if err := simcluster.InstallWebhooks(ctx, c.Config, "config/webhook/manifests.yaml", port, nil); err != nil {
		return err
	}
	floor, err := startFloor()
	if err != nil {
		return err
	}
	defer floor.stop()
	b, err := newBench(ctx, c.Config, cfg, floor, sink)
	if err != nil {
		return err
	}
	if err := registerFloor(ctx, b.c, floor); err != nil {
		return err
	}
	op, err := startOperator(ctx, bin, c, port, &cfg)
	if err != nil {
		return err
	}
	defer op.Stop(10 * time.Second)
	if err := b.prepare(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, op.Tail(20))
	}
	if cfg.cpuProfile != "" {
		go profile(ctx, cfg)
		go b.apiServerProfile(ctx, cfg.cpuProfile+".apiserver", cfg.profileFor)
	}
	out, hist, err := b.measure(ctx)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, op.Tail(20))
	}
	printReport(out, hist, cfg)
	return nil
}

// operatorBinary returns path if it exists, else builds the operator into a temporary folder.
func operatorBinary(ctx context.Context, path string) (string, func(), error) {
	if _, err := os.Stat(path); err == nil {
		return path, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "podwebhook-bin-")
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "opentelemetry-operator")
	say("building the operator into %s", out)
	if err := proc.GoBuild(ctx, ".", "./cmd/opentelemetry-operator", out); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return out, func() { _ = os.RemoveAll(dir) }, nil
}

// startOperator runs the operator as a separate process (as it runs in a cluster), with
// self-managed webhook certificates, and waits for /readyz.
func startOperator(ctx context.Context, bin string, c *simcluster.Cluster, port int, cfg *config) (*proc.Process, error) {
	probePort, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.Dir, "logs", "operator.log")
	args := append([]string{"--kubeconfig=" + c.Kubeconfig, "--metrics-addr=0",
		"--health-probe-addr=127.0.0.1:" + strconv.Itoa(probePort)},
		simcluster.OperatorWebhookFlags(port, filepath.Join(c.Dir, "webhook-certs"), "default")...)
	if cfg.cpuProfile != "" {
		if cfg.pprofPort, err = proc.FreePort(); err != nil {
			return nil, err
		}
		args = append(args, "--pprof-addr=127.0.0.1:"+strconv.Itoa(cfg.pprofPort))
	}
	p, err := proc.Start("operator", bin, args, logPath)
	if err != nil {
		return nil, err
	}
	say("operator started (pid %d); log: %s", p.Pid(), logPath)
	if err := p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(probePort)+"/readyz", 200*time.Millisecond, cfg.timeout); err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

// poll calls cond every interval until it returns true or an error, or timeout passes.
func poll(ctx context.Context, interval, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s (last error: %v)", what, timeout, last)
		}
		time.Sleep(interval)
	}
}

// profile saves the operator's CPU profile over the first cfg.profileFor of the measured phase.
func profile(ctx context.Context, cfg config) {
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", cfg.pprofPort, int(cfg.profileFor.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		say("cpu profile: %v", err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		say("cpu profile: %v", err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err == nil {
		err = os.WriteFile(cfg.cpuProfile, data, 0o644)
	}
	if err != nil {
		say("cpu profile: %v", err)
		return
	}
	say("operator CPU profile (%s of the measured phase) written to %s", cfg.profileFor, cfg.cpuProfile)
}

// apiServerProfile saves the API server's CPU profile (its /debug/pprof, on by default) over d.
func (b *bench) apiServerProfile(ctx context.Context, path string, d time.Duration) {
	data, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		say("API server cpu profile: %v", err)
		return
	}
	say("API server CPU profile (%s of the measured phase) written to %s", d, path)
}
