// Command simcluster keeps a simulated cluster (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok fake nodes, all on loopback) running for local work.
//
//	simcluster up                 start the cluster, print the kubeconfig path, wait for Ctrl-C
//	simcluster run [flags]        also install CRDs, start the operator, apply samples, show what exists
//
// It is what `make sim-up` and `make run` call. Ctrl-C stops every process it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/otelop/otelop/test/simcluster"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "up" && os.Args[1] != "run") {
		fmt.Fprintln(os.Stderr, "usage: simcluster up|run [flags]; simcluster run -h lists the flags")
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	nodes := fs.Int("nodes", 3, "number of fake nodes")
	operator := fs.String("operator", "bin/opentelemetry-operator", "operator binary to run (run only)")
	crds := fs.String("crds", "config/crd/bases", "folder of CRD manifests to install (run only)")
	samples := fs.String("samples", "config/samples", "folder of sample resources to apply (run only)")
	webhooks := fs.String("webhooks", "config/webhook/manifests.yaml", "the operator's webhook configurations (run only)")
	exitAfter := fs.Duration("exit-after", 0, "stop by itself after this long (0 = wait for Ctrl-C); for smoke tests")
	dir := fs.String("dir", "", "working folder for certificates, data and logs (default: a new temporary folder)")
	_ = fs.Parse(os.Args[2:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runCmd(ctx, cmd, *nodes, *operator, *crds, *samples, *webhooks, *dir, *exitAfter); err != nil {
		fmt.Fprintln(os.Stderr, "simcluster:", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

func runCmd(ctx context.Context, cmd string, nodes int, operator, crds, samples, webhooks, dir string, exitAfter time.Duration) error {
	say("starting the simulated cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with %d fake nodes)", nodes)
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: nodes, Dir: dir, KeepDir: dir != "", Progress: func(f string, a ...any) {
		fmt.Printf("    "+f+"\n", a...)
	}})
	if err != nil {
		return err
	}
	defer func() {
		say("stopping every process that was started")
		_ = c.Stop()
		say("done; nothing is left running")
	}()
	say("kubeconfig: %s (export KUBECONFIG=%s to use kubectl now)", c.Kubeconfig, c.Kubeconfig)
	if cmd == "run" {
		r := &runner{c: c}
		if err := r.run(ctx, operator, crds, samples, webhooks); err != nil {
			return err
		}
		defer r.stopOperator()
	}
	say("the cluster is up. In another terminal:\n\n    export KUBECONFIG=%s\n    kubectl get nodes\n", c.Kubeconfig)
	say("component logs: %s", filepath.Join(c.Dir, "logs"))
	if exitAfter > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(exitAfter):
		}
		return nil
	}
	say("press Ctrl-C to stop")
	<-ctx.Done()
	fmt.Println()
	return nil
}
