package render

import (
	"context"
	"fmt"
	"io"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/autodetect"
	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/plan"
)

// Exit codes of render --diff.
const (
	exitNoChanges = 0
	exitError     = 1
	exitChanges   = 2
)

// diffFlags are the flags of render --diff.
type diffFlags struct {
	kubeconfig, context string
	timeout             time.Duration
	// pinned: capability flags the user set; the others are read from the cluster.
	pinned map[string]bool
}

// runDiff plans the collectors in data against the cluster and prints the plan. It returns the
// exit code: 2 when anything would change, 0 when nothing would, 1 on error. The collectors are
// defaulted and validated with the options completed from the cluster, then planned; a problem
// with any of them is an error and nothing is planned.
func runDiff(file string, data []byte, sets []string, namespace string, opts collector.Options, f diffFlags, output string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	cfg, err := restConfig(f.kubeconfig, f.context)
	if err != nil {
		fmt.Fprintf(stderr, "render --diff: loading the cluster connection: %v\n", err)
		return exitError
	}
	c, err := client.New(cfg, client.Options{Scheme: diffScheme()})
	if err != nil {
		fmt.Fprintf(stderr, "render --diff: %v\n", err)
		return exitError
	}
	opts, notes := clusterOptions(ctx, c, opts, f.pinned)
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	cols, problems, warnings := collectors(file, data, sets, namespace, opts)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		return exitError
	}
	p := plan.Plan{}
	for _, vc := range cols {
		col := vc.col
		cp, err := plan.ForCollector(ctx, c, col, opts)
		if err != nil {
			fmt.Fprintf(stderr, "render --diff: OpenTelemetryCollector %s/%s: %v\n", col.Namespace, col.Name, err)
			return exitError
		}
		p.Collectors = append(p.Collectors, cp)
		p.Changes = p.Changes || cp.Changed()
	}
	write := plan.WriteText
	if output == "json" {
		write = plan.WriteJSON
	}
	if err := write(stdout, p); err != nil {
		return exitError
	}
	if p.Changes {
		return exitChanges
	}
	return exitNoChanges
}

// restConfig follows the usual rules: --kubeconfig, then $KUBECONFIG, then the in-cluster
// configuration, then ~/.kube/config; --context picks a context of the file.
func restConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	if kubeconfig == "" {
		return config.GetConfigWithContext(kubeContext)
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: kubeContext}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
}

func diffScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}

// clusterOptions fills in what the operator detects on the cluster and the user did not pin
// with a flag: the optional APIs served (from the CRDs, as the operator's detector reads them),
// and whether the operator creates cluster RBAC (it does when any ClusterRole it generated
// exists). A read that is refused leaves the flag's value, with a note.
func clusterOptions(ctx context.Context, c client.Client, opts collector.Options, pinned map[string]bool) (collector.Options, []string) {
	var notes []string
	caps, err := autodetect.Detect(ctx, c)
	if err != nil {
		notes = append(notes, fmt.Sprintf("cannot read the CRDs (%v); optional APIs as the flags say", err))
	} else {
		set := func(flag string, to *bool, v bool) {
			if !pinned[flag] {
				*to = v
			}
		}
		set("prometheus-crds", &opts.PrometheusCRDs, caps.Prometheus)
		set("gateway-api", &opts.GatewayAPI, caps.GatewayAPI)
		set("openshift-routes", &opts.OpenShiftRoutes, caps.Routes)
		set("cert-manager", &opts.CertManager, caps.CertManager)
	}
	if !pinned["create-rbac"] {
		roles := &rbacv1.ClusterRoleList{}
		err := c.List(ctx, roles, client.MatchingLabels{collectorctrl.ManagedByLabel: collectorctrl.ManagedByValue}, client.Limit(1))
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("cannot list ClusterRoles (%v); assuming the operator does not create cluster RBAC (set --create-rbac)", err))
		case len(roles.Items) > 0:
			opts.CreateRBAC = true
		}
	}
	return opts, notes
}
