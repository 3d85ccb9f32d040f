package collector

import (
	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

// ApplyDefaults fills in upstream's defaults on otelcol in place. It is the builders' own
// defaulting (internal/manifests/collector.ApplyDefaults), so that the stored spec.config, and
// with it the ConfigMap name and hash, is exactly what the reconciler builds from; it is
// deterministic and idempotent.
func ApplyDefaults(otelcol *v1beta1.OpenTelemetryCollector, opts mcollector.Options) error {
	return mcollector.ApplyDefaults(otelcol, opts)
}
