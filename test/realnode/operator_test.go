package realnode_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/realnode"
	"github.com/otelop/otelop/test/simcluster"
)

// k8s is a controller-runtime client (admin) with the operator's scheme.
var k8s client.Client

// startOperator installs the CRDs and the admission webhooks (pointed at 127.0.0.1 inside the
// namespace) and runs the operator in this process, with the real-node collector image as its
// default collector image, this project's target allocator image as its default allocator image,
// the operator.targetallocator.mtls gate on and nginx auto-instrumentation enabled. It runs as cluster admin:
// test/e2e proves the shipped RBAC is enough.
func startOperator(ctx context.Context) (func(), error) {
	ctrllog.SetLogger(logr.Discard())
	root := testenv.RepoRoot()
	cfg := cluster.RESTConfig()
	var err error
	if k8s, err = client.New(cfg, client.Options{Scheme: operator.NewScheme()}); err != nil {
		return nil, err
	}
	if _, err := simcluster.InstallCRDs(ctx, cfg, filepath.Join(root, "config", "crd", "bases"), "realnode"); err != nil {
		return nil, err
	}
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	if err := simcluster.InstallWebhooks(ctx, cfg, filepath.Join(root, "config", "webhook", "manifests.yaml"),
		port, []string{"opentelemetrycollectors.opentelemetry.io"}); err != nil {
		return nil, err
	}
	o := operator.DefaultOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.WebhookHost, o.WebhookPort = "127.0.0.1", port
	o.Certs.Namespace = "default"
	o.Certs.CertDir = filepath.Join(cluster.Dir, "webhook-certs")
	o.Certs.ExtraIPs = []net.IP{net.ParseIP("127.0.0.1")}
	o.CollectorImage = realnode.CollectorImage
	o.OpAMPBridgeImage = bridgeImageRepo + ":1"
	o.TargetAllocatorImage = allocatorImageRepo + ":1"
	// Mutual TLS between collectors and their target allocator, with certificates the operator
	// issues (alpha, off by default as upstream's gate): TestAuthenticatedScrapeThroughTheAllocator.
	o.FeatureGates = "+operator.targetallocator.mtls"
	o.Instrumentation.Nginx = true // off by default, as upstream's; TestInjectedAgentPathsExist covers it
	mgr, err := operator.New(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, "operator:", err)
			}
		case <-time.After(15 * time.Second):
		}
	}, nil
}
