package distributions

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestTypeNames: a module's registered type, with the kind suffix dropped and the exceptions
// whose metadata.yaml type differs from the module name.
func TestTypeNames(t *testing.T) {
	for module, want := range map[string]string{
		"go.opentelemetry.io/collector/receiver/otlpreceiver":                                        "otlp",
		"go.opentelemetry.io/collector/exporter/otlphttpexporter":                                    "otlphttp",
		"github.com/open-telemetry/opentelemetry-collector-contrib/processor/k8sattributesprocessor": "k8sattributes",
		"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/k8sclusterreceiver":      "k8s_cluster",
		"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension":   "health_check",
		"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage":    "file_storage",
		"github.com/open-telemetry/opentelemetry-collector-contrib/extension/observer/k8sobserver":   "k8s_observer",
		"go.opentelemetry.io/collector/processor/memorylimiterprocessor":                             "memory_limiter",
		"github.com/open-telemetry/opentelemetry-collector-contrib/connector/spanmetricsconnector":   "spanmetrics",
		"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/receivercreator":         "receiver_creator",
	} {
		kind := filepath.Base(filepath.Dir(module))
		if kind == "storage" || kind == "observer" {
			kind = "extension"
		}
		if got := TypeOf(module, kind); got != want {
			t.Errorf("%s: %q, want %q", module, got, want)
		}
	}
}

// TestLookup: image references of the official repositories (Docker Hub and GHCR, with a digest,
// with a v prefix) and what is not known.
func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		image           string
		dist, version   string
		official, known bool
	}{
		{"otel/opentelemetry-collector-k8s:0.140.0", "otelcol-k8s", "0.140.0", true, true},
		{"docker.io/otel/opentelemetry-collector-contrib:v0.159.0", "otelcol-contrib", "0.159.0", true, true},
		{"ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.140.1@sha256:ab", "otelcol", "0.140.1", true, true},
		{"otel/opentelemetry-collector:latest", "otelcol", "latest", true, false},
		{"otel/opentelemetry-collector@sha256:ab", "otelcol", "", true, false},
		{"registry.example.com:5000/otel/opentelemetry-collector-k8s:0.140.0", "", "", false, false},
	} {
		img, official, known := Lookup(tc.image)
		if img.Distribution != tc.dist || img.Version != tc.version || official != tc.official || known != tc.known {
			t.Errorf("%s: %s %s official=%v known=%v", tc.image, img.Distribution, img.Version, official, known)
		}
	}
	img, _, _ := Lookup("otel/opentelemetry-collector:0.140.0")
	if img.Has("processor", "k8sattributes") || !img.Has("receiver", "otlp") {
		t.Error("the core image: k8sattributes must be missing and otlp present")
	}
	if got := Providing("0.140.0", "processor", "k8sattributes"); !reflect.DeepEqual(got, []string{"otelcol-contrib", "otelcol-ebpf-profiler", "otelcol-k8s"}) {
		t.Errorf("Providing k8sattributes: %v", got)
	}
}
