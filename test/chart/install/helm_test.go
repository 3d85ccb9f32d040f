package install

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/install/installtest"
)

// chartDir is the chart as users install it from the repository.
func chartDir() string { return filepath.Join(testenv.RepoRoot(), "charts", "opentelemetry-operator") }

// helmConfig is an action.Configuration for the simulated cluster as the helm CLI builds it from
// the admin kubeconfig (`--namespace namespace`), storing releases in Secrets.
func helmConfig(t *testing.T, namespace string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.Cluster.Kubeconfig
	flags.Namespace = &namespace
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// helmInstall runs `helm install name ./charts/opentelemetry-operator --namespace namespace
// --create-namespace` with values (nil: the chart's defaults).
func helmInstall(t *testing.T, name, namespace string, values map[string]any) *release.Release {
	t.Helper()
	ch, err := loader.LoadDir(chartDir())
	if err != nil {
		t.Fatalf("loading chart: %v", err)
	}
	install := action.NewInstall(helmConfig(t, namespace))
	install.ReleaseName = name
	install.Namespace = namespace
	install.CreateNamespace = true
	rel, err := install.Run(ch, values)
	if err != nil {
		t.Fatalf("helm install %s: %v", name, err)
	}
	return rel
}

// manifestKinds counts the kinds of a release's objects.
func manifestKinds(rel *release.Release) map[string]int {
	out := map[string]int{}
	for _, m := range releaseutil.SplitManifests(rel.Manifest) {
		var h releaseutil.SimpleHead
		if err := yaml.Unmarshal([]byte(m), &h); err == nil && h.Kind != "" {
			out[h.Kind]++
		}
	}
	return out
}

// runScenarios starts the operator as the pod of the install named by names, runs scenarios as
// subtests (skip names a scenario left out, with the reason, which is logged) and stops the operator at cleanup.
func runScenarios(t *testing.T, names installtest.Names, skip map[string]string) *installtest.Operator {
	t.Helper()
	start := time.Now()
	op, err := env.RunOperator(context.Background(), names)
	t.Cleanup(op.Stop)
	if err != nil {
		t.Fatalf("running the chart's operator pod: %v", err)
	}
	t.Logf("operator of %s/%s ready in %s", names.Namespace, names.Deployment, time.Since(start).Round(100*time.Millisecond))
	for _, s := range op.Scenarios() {
		// A scenario that does not apply to this install is left out, not skipped: a skip in a
		// required suite fails make test (hack/testreport).
		if why, ok := skip[s.Name]; ok {
			t.Logf("scenario %s left out: %s", s.Name, why)
			continue
		}
		t.Run(s.Name, s.Run)
	}
	return op
}

// uninstall removes an install as a user would who then installs anew: every collector is deleted
// while the operator still runs (it removes the cluster RBAC it made and its finalizer), the
// operator stops, `helm uninstall` removes the releases, and, with deleteCRDs, the CRDs (which the
// chart keeps on uninstall) are deleted by hand, as the chart's README says, and uninstall waits
// until they are gone so that the next install starts from an empty cluster.
func uninstall(t *testing.T, op *installtest.Operator, releases map[string]string, deleteCRDs bool) {
	t.Helper()
	ctx := context.Background()
	k8s := env.Client
	cols := &v1beta1.OpenTelemetryCollectorList{}
	if err := k8s.List(ctx, cols); err != nil {
		t.Fatal(err)
	}
	for i := range cols.Items {
		if err := client.IgnoreNotFound(k8s.Delete(ctx, &cols.Items[i])); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, "collectors deleted", func(ctx context.Context) (bool, error) {
		err := k8s.List(ctx, cols)
		return err == nil && len(cols.Items) == 0, nil
	})
	op.Stop()
	for name, ns := range releases {
		if _, err := action.NewUninstall(helmConfig(t, ns)).Run(name); err != nil {
			t.Fatalf("helm uninstall %s: %v", name, err)
		}
	}
	for name, ns := range releases {
		if _, err := action.NewHistory(helmConfig(t, ns)).Run(name); err == nil {
			t.Errorf("release %s/%s still has a history after helm uninstall", ns, name)
		}
	}
	if !deleteCRDs {
		return
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := k8s.List(ctx, crds); err != nil {
		t.Fatal(err)
	}
	for i := range crds.Items {
		if crds.Items[i].Spec.Group == "opentelemetry.io" {
			if err := client.IgnoreNotFound(k8s.Delete(ctx, &crds.Items[i])); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The API server's CRD finalizer removes the custom resources first; under load it was seen
	// retrying "storage is (re)initializing" for over 90 s, so this wait is longer.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := k8s.List(ctx, crds); err != nil {
			return false, nil
		}
		for _, c := range crds.Items {
			if c.Spec.Group == "opentelemetry.io" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		logStuckCRDs(t)
		t.Fatalf("CRDs deleted: %v", err)
	}
}

// logStuckCRDs logs, for each opentelemetry.io CRD still present, its finalizers and conditions
// (the API server's CRD finalizer writes why it cannot finish into the Terminating condition) and
// the custom resources left with their finalizers.
func logStuckCRDs(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := env.Client.List(ctx, crds); err != nil {
		t.Logf("listing CRDs: %v", err)
		return
	}
	for _, c := range crds.Items {
		if c.Spec.Group != "opentelemetry.io" {
			continue
		}
		t.Logf("CRD %s: deletionTimestamp=%v finalizers=%v", c.Name, c.DeletionTimestamp, c.Finalizers)
		for _, cond := range c.Status.Conditions {
			t.Logf("  %s=%s %s: %s (%s)", cond.Type, cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime)
		}
		for _, v := range c.Spec.Versions {
			if !v.Storage {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(c.Spec.Group + "/" + v.Name)
			list.SetKind(c.Spec.Names.ListKind)
			if err := env.Client.List(ctx, list); err != nil {
				t.Logf("  listing %s: %v", c.Spec.Names.Plural, err)
				continue
			}
			for _, o := range list.Items {
				t.Logf("  left: %s/%s finalizers=%v deletionTimestamp=%v", o.GetNamespace(), o.GetName(), o.GetFinalizers(), o.GetDeletionTimestamp())
			}
		}
	}
}

func poll(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	pollFor(t, what, 90*time.Second, cond)
}

// pollFor polls cond every 200 ms until it holds, failing the test after timeout.
func pollFor(t *testing.T, what string, timeout time.Duration, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
