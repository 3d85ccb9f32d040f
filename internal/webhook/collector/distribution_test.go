package collector

import (
	"strings"
	"testing"

	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

const k8sAgentConfig = `{
  "receivers": {"otlp": {"protocols": {"grpc": {}}}},
  "processors": {"k8sattributes": {}, "batch": {}},
  "exporters": {"debug": {}},
  "service": {"pipelines": {"traces": {"receivers": ["otlp"], "processors": ["k8sattributes", "batch"], "exporters": ["debug"]}}}}`

// TestComponentsTheImageLacksAreRefused is issue 32's distribution check: k8sattributes on the
// core image is refused with its path and the distributions that have it; the same config on the
// -k8s image is accepted without a word (the positive control); an image that is not official, or
// an official one at an unknown version, is accepted with a warning that the check did not run; a
// type no official distribution has (a custom build's) is left alone; and without spec.image the
// operator's default image only warns, since an install may set another default.
func TestComponentsTheImageLacksAreRefused(t *testing.T) {
	opts := ValidateOptions{Manifests: mcollector.DefaultOptions()}
	run := func(config, image string) ([]string, []string) {
		c := collector(t, config, func(s *v1beta1.OpenTelemetryCollectorSpec) { s.Image = image })
		errs, warnings := Validate(c, nil, opts)
		var out []string
		for _, e := range errs {
			out = append(out, e.Error())
		}
		return out, warnings
	}
	errs, _ := run(k8sAgentConfig, "otel/opentelemetry-collector:0.140.0")
	if len(errs) != 1 || !strings.Contains(errs[0], "spec.config.processors.k8sattributes") ||
		!strings.Contains(errs[0], "available in otelcol-k8s, otelcol-contrib") {
		t.Fatalf("k8sattributes on the core image: %q", errs)
	}
	for _, image := range []string{"otel/opentelemetry-collector-k8s:0.140.0", "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib:0.159.0",
		"docker.io/otel/opentelemetry-collector-k8s:0.140.1@sha256:0123"} {
		if errs, warnings := run(k8sAgentConfig, image); len(errs)+len(warnings) != 0 {
			t.Errorf("%s: %q %q, want accepted without a word", image, errs, warnings)
		}
	}
	for _, image := range []string{"registry.example.com/my-otelcol:1.0", "otel/opentelemetry-collector:latest", "otel/opentelemetry-collector:0.120.0"} {
		errs, warnings := run(k8sAgentConfig, image)
		if len(errs) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "did not check") {
			t.Errorf("%s: %q %q, want accepted with a warning that the check did not run", image, errs, warnings)
		}
	}
	custom := strings.ReplaceAll(k8sAgentConfig, "k8sattributes", "mycompanyenricher")
	if errs, _ := run(custom, "otel/opentelemetry-collector:0.140.0"); len(errs) != 0 {
		t.Errorf("a type no official distribution has: %q, want left alone", errs)
	}
	errs, warnings := run(k8sAgentConfig, "")
	if len(errs) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "default image") || !strings.Contains(warnings[0], "otelcol-k8s") {
		t.Errorf("no spec.image: %q %q, want one warning naming the default image and otelcol-k8s", errs, warnings)
	}
}
