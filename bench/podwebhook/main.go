// Command podwebhook measures the admission latency of the operator's pod webhook
// (/mutate-v1-pod, mpod.kb.io) on the simulated cluster, as the API server sees it: the
// apiserver_admission_webhook_admission_duration_seconds histogram of that webhook, for pods
// created directly by a client in three cases: no annotation, a collector sidecar, Java
// auto-instrumentation (with a ReplicaSet owner, so the owner chain is read).
//
//	go run ./bench/podwebhook [flags]     (from the repository root; --help lists the flags)
package main

import (
	"context"
	"flag"
	"fmt"
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
}

func main() {
	var cfg config
	fs := flag.NewFlagSet("podwebhook", flag.ContinueOnError)
	fs.StringVar(&cfg.operator, "operator", "bin/opentelemetry-operator", "operator binary (built with `make build`); built into a temporary folder when missing")
	fs.IntVar(&cfg.pods, "pods", 500, "pods created per case")
	fs.IntVar(&cfg.concurrency, "concurrency", 1, "concurrent pod creations (1: one after the other, as the baseline was measured)")
	fs.DurationVar(&cfg.timeout, "timeout", 3*time.Minute, "bound of every wait")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the cluster's folder (logs) after the run")
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
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: 1, KeepDir: cfg.keep, Progress: say})
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
	op, err := startOperator(ctx, bin, c, port, cfg.timeout)
	if err != nil {
		return err
	}
	defer op.Stop(10 * time.Second)
	b, err := newBench(ctx, c.Config, cfg)
	if err != nil {
		return err
	}
	if err := b.prepare(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, op.Tail(20))
	}
	var rows []row
	for _, cs := range cases {
		r, err := b.measure(ctx, cs)
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", cs.name, err, op.Tail(20))
		}
		rows = append(rows, r)
	}
	printTable(rows, cfg)
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
func startOperator(ctx context.Context, bin string, c *simcluster.Cluster, port int, timeout time.Duration) (*proc.Process, error) {
	probePort, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.Dir, "logs", "operator.log")
	args := append([]string{"--kubeconfig=" + c.Kubeconfig, "--metrics-addr=0",
		"--health-probe-addr=127.0.0.1:" + strconv.Itoa(probePort)},
		simcluster.OperatorWebhookFlags(port, filepath.Join(c.Dir, "webhook-certs"), "default")...)
	p, err := proc.Start("operator", bin, args, logPath)
	if err != nil {
		return nil, err
	}
	say("operator started (pid %d); log: %s", p.Pid(), logPath)
	if err := p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(probePort)+"/readyz", 200*time.Millisecond, timeout); err != nil {
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
