package chart

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/testenv"
)

// chartDir is the chart under test, as users install it from the repository.
func chartDir() string {
	return filepath.Join(testenv.RepoRoot(), "charts", "opentelemetry-operator")
}

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(chartDir())
	if err != nil {
		t.Fatalf("loading chart: %v", err)
	}
	return ch
}

// release says how the chart is installed in a test.
type release struct {
	name, namespace string
	values          map[string]any
}

// render runs `helm install --dry-run` (client only) and returns the manifest's objects in order.
func render(t testing.TB, r release) []*unstructured.Unstructured {
	t.Helper()
	objs, err := tryRender(t, r)
	if err != nil {
		t.Fatalf("rendering chart (release %s/%s): %v", r.namespace, r.name, err)
	}
	return objs
}

func tryRender(t testing.TB, r release) ([]*unstructured.Unstructured, error) {
	t.Helper()
	return renderChart(t, loadChart(t), r)
}

// renderChart renders ch as `helm install --dry-run` does for release r.
func renderChart(t testing.TB, ch *chart.Chart, r release) ([]*unstructured.Unstructured, error) {
	t.Helper()
	objs, _, err := renderChartNotes(t, ch, r)
	return objs, err
}

// renderChartNotes is renderChart that also returns the release notes (NOTES.txt).
func renderChartNotes(t testing.TB, ch *chart.Chart, r release) ([]*unstructured.Unstructured, string, error) {
	t.Helper()
	if r.name == "" {
		r.name = "otel"
	}
	if r.namespace == "" {
		r.namespace = "observability"
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = r.name
	install.Namespace = r.namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: testenv.K8sVersion, Major: "1", Minor: "37"}
	rel, err := install.Run(ch, r.values)
	if err != nil {
		return nil, "", err
	}
	manifests := releaseutil.SplitManifests(rel.Manifest)
	keys := make([]string, 0, len(manifests))
	for k := range manifests {
		keys = append(keys, k)
	}
	// SplitManifests keys are "manifest-<n>"; keep the manifest's order.
	sortManifestKeys(keys)
	var out []*unstructured.Unstructured
	for _, k := range keys {
		doc := strings.TrimSpace(manifests[k])
		if doc == "" {
			continue
		}
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, "", err
		}
		if string(data) == "null" || string(data) == "{}" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, "", fmt.Errorf("%w in\n%s", err, doc)
		}
		out = append(out, u)
	}
	return out, rel.Info.Notes, nil
}

func sortManifestKeys(keys []string) {
	num := func(k string) int {
		n := 0
		for _, c := range strings.TrimPrefix(k, "manifest-") {
			n = n*10 + int(c-'0')
		}
		return n
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && num(keys[j]) < num(keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

// find returns the object of kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// kinds counts the rendered objects by kind.
func kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetKind()]++
	}
	return out
}
