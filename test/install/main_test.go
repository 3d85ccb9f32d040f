// Package install proves that config/default works as shipped. On the simulated cluster it runs
// what the README tells users to run, `kubectl apply --server-side -k config/default`, unmodified;
// kwok schedules the operator's pod on a fake node, and the operator binary then runs as a local
// process standing in for that pod (installtest.Env.RunOperator): it authenticates with a token of
// the shipped ServiceAccount bound to the pod, gets the Deployment's container args, and listens on
// the pod's IP (a 127.128.x.y loopback address). The API server reaches the shipped Service-based
// webhook and conversion configurations through the Service's endpoints. The tests then run the
// installtest scenarios (conversion, collector RBAC, metrics authorization, leader election,
// readiness) against that install; test/chart runs the same scenarios against the Helm chart.
package install

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/install/installtest"
)

// names of the shipped install (config/default: namespace and namePrefix are upstream's).
var names = installtest.Names{
	Namespace:      "opentelemetry-operator-system",
	Deployment:     "opentelemetry-operator-controller-manager",
	WebhookService: "opentelemetry-operator-webhook-service",
	MetricsService: "opentelemetry-operator-controller-manager-metrics-service",
	MetricsReader:  "opentelemetry-operator-metrics-reader",
	CertSecret:     "opentelemetry-operator-webhook-cert",
}

// op is the operator running as the shipped Deployment's pod.
var op *installtest.Operator

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	// The API server's warnings (v1alpha1 is deprecated) are expected; keep the output readable.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	env, err := installtest.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { env.Stop(code != 0) }()

	// What the README says, verbatim apart from the kubeconfig.
	apply := exec.CommandContext(ctx, filepath.Join(env.BinDir(), "kubectl"), "--kubeconfig="+env.Cluster.Kubeconfig,
		"apply", "--server-side", "-k", "config/default")
	apply.Dir = testenv.RepoRoot()
	if out, err := apply.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "kubectl apply --server-side -k config/default: %v\n%s\n", err, out)
		return 1
	}
	op, err = env.RunOperator(ctx, names)
	defer op.Stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "config/default installed and the operator ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}
