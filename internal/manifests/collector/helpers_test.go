package collector

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// loadCR reads a v1beta1 collector from testdata and defaults it as the webhook would.
func loadCR(t testing.TB, name string, opts Options) v1beta1.OpenTelemetryCollector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var col v1beta1.OpenTelemetryCollector
	if err := yaml.UnmarshalStrict(b, &col); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if col.Namespace == "" {
		col.Namespace = "observability"
	}
	if err := ApplyDefaults(&col, opts); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return col
}

// render prints objects as a multi-document YAML stream.
func render(t testing.TB, objs []client.Object) []byte {
	t.Helper()
	b, err := manifestutils.Encode(objs, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
