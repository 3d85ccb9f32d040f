package collector

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

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

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/manifests/... -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the built objects; review the diff and run go test ./internal/manifests/... -update\n%s", path, firstDiff(want, got))
	}
}

func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + itoa(i+1) + ":\n  want: " + string(w) + "\n  got:  " + string(g)
		}
	}
	return ""
}

func itoa(i int) string {
	b := []byte{}
	for i > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(b)
}
