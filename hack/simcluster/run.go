package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

// runner adds the operator and the samples to a running cluster.
type runner struct {
	c        *simcluster.Cluster
	operator *proc.Process
}

func (r *runner) run(ctx context.Context, operator, crds, samples, webhooks string) error {
	cl, err := client.New(r.c.Config, client.Options{})
	if err != nil {
		return err
	}
	n, err := simcluster.InstallCRDs(ctx, r.c.Config, crds, "simcluster")
	if err != nil {
		return err
	}
	say("installed %d CRDs from %s", n, crds)
	_, port, _ := net.SplitHostPort(freeAddr())
	webhookPort, _ := strconv.Atoi(port)
	if err := simcluster.InstallWebhooks(ctx, r.c.Config, webhooks, webhookPort, []string{"opentelemetrycollectors.opentelemetry.io"}); err != nil {
		return err
	}
	say("registered the operator's webhooks at https://127.0.0.1:%d (the operator issues their certificate)", webhookPort)
	if err := r.startOperator(ctx, operator, webhookPort); err != nil {
		return err
	}
	applied, err := applySamples(ctx, cl, samples)
	if err != nil {
		return err
	}
	say("applied %d sample resources from %s", applied, samples)
	say("waiting for the collectors to become Ready (pods run on kwok's fake nodes)")
	waitReady(ctx, r.c.Config, 90*time.Second)
	r.show(ctx)
	return nil
}

func applySamples(ctx context.Context, cl client.Client, dir string) (int, error) {
	objs, err := simcluster.ReadManifests(dir)
	if err != nil {
		return 0, err
	}
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetName() < objs[j].GetName() })
	applied := 0
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace("default")
		}
		// Retry briefly: the operator's webhooks may still be starting.
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("simcluster"), client.ForceOwnership)
			if err != nil {
				fmt.Printf("    %s %s: %v (retrying)\n", o.GetKind(), o.GetName(), err)
			}
			return err == nil, nil
		})
		if err != nil {
			return applied, fmt.Errorf("applying sample %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		applied++
	}
	return applied, nil
}

func freeAddr() string {
	addr, err := proc.FreeAddr()
	if err != nil {
		return "127.0.0.1:0"
	}
	return addr
}

func (r *runner) startOperator(ctx context.Context, bin string, webhookPort int) error {
	logPath := filepath.Join(r.c.Dir, "logs", "operator.log")
	probe := freeAddr()
	args := append([]string{"--kubeconfig=" + r.c.Kubeconfig, "--metrics-addr=" + freeAddr(), "--metrics-secure=false",
		"--health-probe-addr=" + probe},
		simcluster.OperatorWebhookFlags(webhookPort, filepath.Join(r.c.Dir, "webhook-certs"), "default")...)
	p, err := proc.Start("operator", bin, args, logPath)
	if err != nil {
		return err
	}
	r.operator = p
	say("operator started (pid %d); its log: %s", p.Pid(), logPath)
	if err := p.WaitHTTP(ctx, "http://"+probe+"/readyz", 200*time.Millisecond, 60*time.Second); err != nil {
		return err
	}
	say("operator ready (readyz on %s)", probe)
	return nil
}

func (r *runner) stopOperator() {
	if r.operator != nil {
		r.operator.Stop(10 * time.Second)
	}
}

// show prints the custom resources and what the operator generated, with kubectl.
func (r *runner) show(ctx context.Context) {
	kubectl := findKubectl()
	for _, args := range [][]string{
		{"get", "opentelemetrycollectors,instrumentations,opampbridges,targetallocators", "-A"},
		{"get", "deployments,daemonsets,statefulsets,services,configmaps,serviceaccounts,pods", "-A", "-l", "app.kubernetes.io/managed-by=opentelemetry-operator"},
	} {
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig=" + r.c.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		say("kubectl %s", strings.Join(args, " "))
		fmt.Println(strings.TrimRight(string(out), "\n"))
		if err != nil {
			fmt.Println("    (" + err.Error() + ")")
		}
	}
}

func findKubectl() string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join("bin", "k8s", simcluster.K8sVersion)
	}
	if p := filepath.Join(dir, "kubectl"); fileExists(p) {
		return p
	}
	return "kubectl"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// waitReady waits until every OpenTelemetryCollector has Ready=True, printing the ones that are
// not yet, for at most limit.
func waitReady(ctx context.Context, cfg *rest.Config, limit time.Duration) {
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return
	}
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) && ctx.Err() == nil {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("opentelemetry.io/v1beta1")
		list.SetKind("OpenTelemetryCollectorList")
		if err := cl.List(ctx, list); err == nil {
			var waiting []string
			for _, it := range list.Items {
				conds, _, _ := unstructured.NestedSlice(it.Object, "status", "conditions")
				ready := false
				for _, c := range conds {
					m, _ := c.(map[string]any)
					if m["type"] == "Ready" && m["status"] == "True" {
						ready = true
					}
				}
				if !ready {
					waiting = append(waiting, it.GetName())
				}
			}
			if len(waiting) == 0 {
				say("all %d collectors are Ready", len(list.Items))
				return
			}
			if msg := strings.Join(waiting, ", "); msg != last {
				fmt.Printf("    not Ready yet: %s\n", msg)
				last = msg
			}
		}
		time.Sleep(time.Second)
	}
	say("some collectors are not Ready yet; see their status conditions below")
}
