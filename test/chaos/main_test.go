// Package chaos injects faults into the simulated cluster while the operator, running as a
// separate process with only the shipped RBAC, converges collectors: the kube-apiserver crashes,
// the operator is SIGKILLed, the operator is down while collectors and pods are created, and a
// second writer fights the operator over a field of an owned object. Each scenario is bounded
// and self-stopping, and is followed by the same checks (checks_test.go): every collector is
// Ready, each has exactly the objects the builder makes for it and every managed object has an
// owner that exists, no user object was deleted or written by the operator, and the operator
// writes nothing at idle (the API server's audit log, by the operator's identity).
package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

// operatorUser is the operator's identity (client certificate CN) in the audit log.
const operatorUser = "otelop-chaos-operator"

var (
	cluster *simcluster.Cluster
	k8s     client.Client
	op      *operatorProcess
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := setUp(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		if cluster != nil {
			fmt.Fprintln(os.Stderr, "logs kept in", cluster.Keep())
			_ = cluster.Stop()
		}
		return 1
	}
	code := m.Run()
	op.stop()
	if code != 0 {
		fmt.Fprintln(os.Stderr, cluster.LogTails(15))
		fmt.Fprintln(os.Stderr, "the simulated cluster's and the operator's logs are kept in", cluster.Keep())
	}
	_ = cluster.Stop()
	return code
}

// setUp starts the cluster (with an audit log), installs the CRDs and webhooks as shipped, builds
// the operator binary and starts it with the shipped RBAC bound to its client certificate.
func setUp(ctx context.Context) error {
	root := testenv.RepoRoot()
	var err error
	if cluster, err = simcluster.Start(ctx, simcluster.Options{Nodes: 3, Audit: true}); err != nil {
		return err
	}
	if k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		return err
	}
	if _, err := simcluster.InstallCRDs(ctx, cluster.Config, filepath.Join(root, "config", "crd", "bases"), "chaos-test"); err != nil {
		return err
	}
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	if err := simcluster.InstallWebhooks(ctx, cluster.Config, filepath.Join(root, "config", "webhook", "manifests.yaml"),
		port, []string{"opentelemetrycollectors.opentelemetry.io"}); err != nil {
		return err
	}
	if err := bindShippedRBAC(ctx, filepath.Join(root, "config", "rbac", "role.yaml")); err != nil {
		return err
	}
	kubeconfig, _, _, err := cluster.IssueClient("operator", operatorUser, nil)
	if err != nil {
		return err
	}
	bin := filepath.Join(cluster.Dir, "opentelemetry-operator")
	if err := proc.GoBuild(ctx, root, "./cmd/opentelemetry-operator", bin); err != nil {
		return err
	}
	op = &operatorProcess{bin: bin, args: append([]string{"--kubeconfig=" + kubeconfig, "--metrics-addr=0"},
		simcluster.OperatorWebhookFlags(port, filepath.Join(cluster.Dir, "webhook-certs"), "default")...)}
	return op.start(ctx)
}

// bindShippedRBAC binds the operator's generated ClusterRole (and its Role, in "default", where
// the webhook certificate Secret lives) to operatorUser.
func bindShippedRBAC(ctx context.Context, roleFile string) error {
	objs, err := simcluster.ReadManifestFile(roleFile)
	if err != nil {
		return err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}}
	for _, u := range objs {
		var create []client.Object
		switch u.GetKind() {
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				return err
			}
			role.Name = "chaos-" + role.Name
			create = append(create, role, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}, Subjects: subjects})
		case "Role":
			role := &rbacv1.Role{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				return err
			}
			role.Name, role.Namespace = "chaos-"+role.Name, "default"
			create = append(create, role, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, Subjects: subjects})
		default:
			return fmt.Errorf("%s: unexpected %s", roleFile, u.GetKind())
		}
		for _, o := range create {
			if err := k8s.Create(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// operatorProcess is the operator binary, started and stopped by the scenarios. It runs without
// leader election (one replica): a restart takes over at once, and the idle check sees no Lease
// renewals.
type operatorProcess struct {
	bin  string
	args []string
	p    *proc.Process
	runs int
}

// start runs the operator and waits until /readyz answers.
func (o *operatorProcess) start(ctx context.Context) error {
	probe, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	o.runs++
	log := filepath.Join(cluster.Dir, "logs", "operator-"+strconv.Itoa(o.runs)+".log")
	if o.p, err = proc.Start("operator", o.bin, append(o.args, "--health-probe-addr="+probe), log); err != nil {
		return err
	}
	if err := o.p.WaitHTTP(ctx, "http://"+probe+"/readyz", 200*time.Millisecond, 2*time.Minute); err != nil {
		o.p.Stop(5 * time.Second)
		o.p = nil
		return err
	}
	return nil
}

// kill SIGKILLs the operator (a crash: no cleanup, no graceful shutdown).
func (o *operatorProcess) kill() {
	if o.p != nil {
		o.p.Kill()
		o.p = nil
	}
}

// stop ends the operator gracefully (SIGTERM), as a rollout or a node drain does.
func (o *operatorProcess) stop() {
	if o.p != nil {
		o.p.Stop(10 * time.Second)
		o.p = nil
	}
}

// ensureRunning starts the operator if a scenario left it stopped (so that one failure does not
// cascade into the next scenario).
func ensureRunning(ctx context.Context, t *testing.T) {
	t.Helper()
	if op.p == nil || op.p.Exited() {
		if err := op.start(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
