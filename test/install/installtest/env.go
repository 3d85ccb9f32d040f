// Package installtest proves an operator install on the simulated cluster, whatever put it there
// (config/default with kubectl, the Helm chart with the Helm SDK): the operator binary runs as a
// local process standing in for the install's pod (the token of its ServiceAccount bound to the
// pod, the Deployment's container args, the pod's 127.128.x.y IP), the API server reaches it
// through the install's Services (simcluster.Options.ServiceRouting and PublishEndpoints), and the
// scenarios check conversion, collector RBAC, metrics authorization, leader election and readiness
// against it. Object names are parameters (Names), so the same scenarios run on every install.
package installtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

// Env is a simulated cluster with service routing and admin clients of it.
type Env struct {
	Cluster *simcluster.Cluster
	// Client is an admin client with the operator's scheme; Clientset the typed admin clients.
	Client    client.Client
	Clientset kubernetes.Interface

	buildOnce sync.Once
	bin       string
	buildErr  error
}

// Start starts a simulated cluster whose API server routes Service-referenced webhooks to the
// Services' endpoints, which is what an install's conversion and admission webhooks need here.
func Start(ctx context.Context) (*Env, error) {
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: 2, ServiceRouting: true})
	if err != nil {
		return nil, err
	}
	e := &Env{Cluster: c}
	if e.Client, err = client.New(c.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		_ = c.Stop()
		return nil, err
	}
	if e.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return e, nil
}

// Stop stops the cluster. When failed, it first prints the components' log tails and keeps the
// cluster's folder (logs, operator logs) for reading.
func (e *Env) Stop(failed bool) {
	if failed {
		fmt.Fprintln(os.Stderr, e.Cluster.LogTails(15))
		fmt.Fprintln(os.Stderr, "the simulated cluster's logs (and operator logs) are kept in", e.Cluster.Keep())
	}
	_ = e.Cluster.Stop()
}

// BinDir is the folder of the Kubernetes binaries (kubectl among them).
func (e *Env) BinDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(testenv.RepoRoot(), "bin", "k8s", simcluster.K8sVersion)
}

// operatorBinary builds cmd/opentelemetry-operator once per Env.
func (e *Env) operatorBinary(ctx context.Context) (string, error) {
	e.buildOnce.Do(func() {
		e.bin = filepath.Join(e.Cluster.Dir, "opentelemetry-operator")
		e.buildErr = proc.GoBuild(ctx, testenv.RepoRoot(), "./cmd/opentelemetry-operator", e.bin)
	})
	return e.bin, e.buildErr
}
