package plan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook"
	wcollector "github.com/otelop/otelop/internal/webhook/collector"
)

var (
	env *testenv.Env
	// k8s is an uncached admin client: it stands for the user (or the GitOps tool) applying
	// collectors.
	k8s client.Client
	// reviewerKubeconfig is a kubeconfig file for a user who may only get, list and watch: what
	// a CI job planning a pull request holds. Every render --diff of the tests uses it.
	reviewerKubeconfig string
)

// TestMain starts kube-apiserver with the CRDs and the shipped webhook configurations, a manager
// serving the operator's webhooks (collectors are converted, defaulted and validated as in a
// cluster), and the operator's manager reconciling them, as deployed.
func TestMain(m *testing.M) {
	scheme := operator.NewScheme()
	e, err := testenv.Start(testenv.Options{Scheme: scheme, WebhookInstallOptions: testenv.ShippedWebhooks()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env, k8s = e, e.Client
	ctx, cancel := context.WithCancel(context.Background())
	code := 1
	stopped, err := start(ctx)
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	cancel()
	for _, s := range stopped {
		<-s
	}
	_ = env.Stop()
	if reviewerKubeconfig != "" {
		_ = os.RemoveAll(filepath.Dir(reviewerKubeconfig))
	}
	os.Exit(code)
}

// start runs the webhook manager and the operator and writes the reviewer's kubeconfig.
func start(ctx context.Context) ([]<-chan struct{}, error) {
	var stopped []<-chan struct{}
	_, hooks, err := env.StartWebhookManager(ctx, nil, env.Client.Scheme(), func(mgr ctrl.Manager) error {
		manifests := mcollector.DefaultOptions()
		manifests.CreateRBAC = true
		return webhook.Setup(ctx, mgr, webhook.Options{Collector: wcollector.Options{Manifests: manifests}})
	})
	if err != nil {
		return nil, err
	}
	stopped = append(stopped, hooks)
	o := operator.DefaultOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.EnableWebhooks = false // served by the manager above
	o.SkipControllerNameValidation = true
	o.StatusCoalesceWindow = 0 // status.observedGeneration says when a reconcile is done
	o.InstrumentationScanInterval = 0
	mgr, err := operator.New(ctx, env.Config, o)
	if err != nil {
		return stopped, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
		}
	}()
	stopped = append(stopped, done)
	return stopped, writeReviewer(ctx)
}

// writeReviewer creates the read-only user and its kubeconfig file.
func writeReviewer(ctx context.Context) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "plan-reviewer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "plan-reviewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "reviewer"}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			return err
		}
	}
	user, err := env.Environment.ControlPlane.AddUser(envtest.User{Name: "reviewer"}, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "plan-test-")
	if err != nil {
		return err
	}
	reviewerKubeconfig = filepath.Join(dir, "kubeconfig")
	return os.WriteFile(reviewerKubeconfig, kc, 0o600)
}
