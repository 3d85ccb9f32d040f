// Package e2e runs the operator against the simulated cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok fake nodes), as a ServiceAccount holding only
// the shipped RBAC (config/rbac): collectors go through the real admission and conversion
// webhooks, their Deployments get pods that become Ready, and the operator's status follows.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

// scanInterval is the catch-up controller's --instrumentation-scan-interval here.
const scanInterval = 2 * time.Second

var (
	cluster *simcluster.Cluster
	k8s     client.Client
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := testenv.RepoRoot()
	var err error
	cluster, err = simcluster.Start(ctx, simcluster.Options{Nodes: 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cluster.Stop() }()
	defer func() {
		if allocatorBuild.path != "" {
			_ = os.RemoveAll(filepath.Dir(allocatorBuild.path))
		}
	}()
	if k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := simcluster.InstallCRDs(ctx, cluster.Config, filepath.Join(root, "config", "crd", "bases"), "e2e"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	port, err := proc.FreePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = simcluster.InstallWebhooks(ctx, cluster.Config, filepath.Join(root, "config", "webhook", "manifests.yaml"),
		port, []string{"opentelemetrycollectors.opentelemetry.io"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o := operator.DefaultOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.WebhookHost, o.WebhookPort = "127.0.0.1", port
	o.Certs.Namespace = "default"
	o.Certs.CertDir = filepath.Join(cluster.Dir, "webhook-certs")
	o.Certs.ExtraIPs = []net.IP{net.ParseIP("127.0.0.1")}
	o.InstrumentationScanInterval = scanInterval
	operatorCfg, err := operatorIdentity(ctx, cluster.Config, roleFile(root))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := operator.New(ctx, operatorCfg, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, cluster.LogTails(15))
		fmt.Fprintln(os.Stderr, "the simulated cluster's logs are kept in", cluster.Keep())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	case <-time.After(15 * time.Second):
	}
	return code
}
