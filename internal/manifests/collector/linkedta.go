package collector

import (
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// LinkedTargetAllocator returns the name of the standalone TargetAllocator that otelcol names in
// its opentelemetry.io/target-allocator label, and whether there is one (an empty value is no
// link). As upstream, the label wins over spec.targetAllocator.enabled for where the prometheus
// receiver fetches its targets.
func LinkedTargetAllocator(otelcol *v1beta1.OpenTelemetryCollector) (string, bool) {
	name := otelcol.Labels[manifestutils.LabelTargetAllocator]
	return name, name != ""
}
