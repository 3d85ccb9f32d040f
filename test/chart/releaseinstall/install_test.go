// Package releaseinstall proves that the release's single-file manifest installs on its own: on the
// simulated cluster it runs `kubectl apply --server-side -f opentelemetry-operator.yaml` on the file
// `make release` writes (release.Manifest, the same bytes), and nothing else; the operator binary
// then runs as the Deployment's pod (installtest.Env.RunOperator) and the installtest scenarios
// (conversion webhook, collector RBAC, metrics authorization, leader election, readiness) run
// against that install, as test/install runs them against config/default.
package releaseinstall

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/chart/internal/release"
	"github.com/otelop/otelop/test/install/installtest"
)

// names of the release manifest's objects (config/default's: upstream's namespace and prefix).
var names = installtest.Names{
	Namespace:      "opentelemetry-operator-system",
	Deployment:     release.ManagerDeployment,
	WebhookService: "opentelemetry-operator-webhook-service",
	MetricsService: "opentelemetry-operator-controller-manager-metrics-service",
	MetricsReader:  "opentelemetry-operator-metrics-reader",
	CertSecret:     "opentelemetry-operator-webhook-cert",
}

const image = "registry.example/otelop/opentelemetry-operator:9.8.7"

var (
	env *installtest.Env
	op  *installtest.Operator
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var err error
	if env, err = installtest.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { env.Stop(code != 0) }()

	manifest, err := release.Manifest(testenv.RepoRoot(), image, "9.8.7")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	file := filepath.Join(env.Cluster.Dir, release.ManifestFile)
	if err := os.WriteFile(file, manifest, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// What the README says a user runs, apart from the kubeconfig.
	apply := exec.CommandContext(ctx, filepath.Join(env.BinDir(), "kubectl"), "--kubeconfig="+env.Cluster.Kubeconfig,
		"apply", "--server-side", "-f", file)
	if out, err := apply.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "kubectl apply --server-side -f %s: %v\n%s\n", release.ManifestFile, err, out)
		return 1
	}
	op, err = env.RunOperator(ctx, names)
	defer op.Stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "%s applied and the operator ready in %s\n", release.ManifestFile, time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}

// TestDeploymentAvailableWithTheReleaseImage: the operator's Deployment, as applied, runs the
// release's image and reports Available.
func TestDeploymentAvailableWithTheReleaseImage(t *testing.T) {
	g := NewWithT(t)
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: names.Namespace, Name: names.Deployment}, dep)).To(Succeed())
		g.Expect(dep.Status.Conditions).To(ContainElement(And(
			HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
	}).WithTimeout(90 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
}

// TestScenarios runs every installtest scenario against the release manifest's install.
func TestScenarios(t *testing.T) {
	for _, s := range op.Scenarios() {
		t.Run(s.Name, s.Run)
	}
}
