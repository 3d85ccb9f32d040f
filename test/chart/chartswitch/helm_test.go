package chartswitch

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/testenv"
)

// The release as docs/migrating.md names it.
const (
	releaseName = "opentelemetry-operator"
	namespace   = "opentelemetry-operator-system"
	// fullname is both charts' <fullname> for that release name (it contains the chart's name).
	fullname = "opentelemetry-operator"
)

// upstreamChart is upstream's chart 0.101.0 (appVersion 0.140.0) as published.
func upstreamChart(t *testing.T) *chart.Chart {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(), "..", "shared", "fixtures", "upstream-helm-charts", "opentelemetry-operator-0.101.0")
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatalf("upstream's chart (expected at ../shared/fixtures/upstream-helm-charts from the repository root): %v", err)
	}
	return ch
}

// ourChart is ./charts/opentelemetry-operator.
func ourChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(filepath.Join(testenv.RepoRoot(), "charts", "opentelemetry-operator"))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// userValues reads the user's values file (-f testdata/values.yaml).
func userValues(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := chartutil.ReadValues(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// helmConfig is the helm CLI's configuration for `--namespace namespace` against the simulated
// cluster's admin kubeconfig, releases stored in Secrets.
func helmConfig(t *testing.T) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.Cluster.Kubeconfig
	ns := namespace
	flags.Namespace = &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// helmInstall is `helm install opentelemetry-operator <chart> -n opentelemetry-operator-system
// --create-namespace -f values`.
func helmInstall(t *testing.T, ch *chart.Chart, values map[string]any) *release.Release {
	t.Helper()
	in := action.NewInstall(helmConfig(t))
	in.ReleaseName, in.Namespace, in.CreateNamespace = releaseName, namespace, true
	rel, err := in.Run(ch, values)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	return rel
}

// helmUpgrade is `helm upgrade opentelemetry-operator <chart> -n ... -f values` or, with reuse,
// `helm upgrade ... --reuse-values` (values nil).
func helmUpgrade(t *testing.T, ch *chart.Chart, values map[string]any, reuse bool) *release.Release {
	t.Helper()
	up := action.NewUpgrade(helmConfig(t))
	up.Namespace, up.ReuseValues = namespace, reuse
	rel, err := up.Run(releaseName, ch, values)
	if err != nil {
		t.Fatalf("helm upgrade (reuse-values %v): %v", reuse, err)
	}
	return rel
}

// helmRollback is `helm rollback opentelemetry-operator <revision> -n ...`; it returns the new
// revision.
func helmRollback(t *testing.T, revision int) *release.Release {
	t.Helper()
	cfg := helmConfig(t)
	rb := action.NewRollback(cfg)
	rb.Version = revision
	if err := rb.Run(releaseName); err != nil {
		t.Fatalf("helm rollback to %d: %v", revision, err)
	}
	rel, err := cfg.Releases.Last(releaseName)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// objectKey names a release object: "Kind namespace/name" (namespace empty for cluster objects).
type objectKey struct{ APIVersion, Kind, Namespace, Name string }

func (k objectKey) String() string {
	if k.Namespace == "" {
		return k.Kind + " " + k.Name
	}
	return k.Kind + " " + k.Namespace + "/" + k.Name
}

// releaseObjects lists the objects of a release's manifest.
func releaseObjects(t *testing.T, rel *release.Release) map[objectKey]bool {
	t.Helper()
	out := map[objectKey]bool{}
	for _, m := range releaseutil.SplitManifests(rel.Manifest) {
		var h struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(m), &h); err != nil {
			t.Fatal(err)
		}
		if h.Kind != "" {
			out[objectKey{h.APIVersion, h.Kind, h.Metadata.Namespace, h.Metadata.Name}] = true
		}
	}
	return out
}

// only returns the keys of a that b lacks, sorted.
func only(a, b map[objectKey]bool) []objectKey {
	var out []objectKey
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
