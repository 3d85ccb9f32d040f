package release

import (
	"strings"

	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/webhook/instrumentation"
)

// ImagesFile lists, one reference a line, every image an install of the release's manifest may
// pull (for mirroring into another registry).
const ImagesFile = "images.txt"

// ChartCollectorImage is the chart's default collector image (values.yaml's
// manager.collectorImage with the tag the chart passes when the tag is empty).
const ChartCollectorImage = "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-k8s:0.140.1"

// Images returns every image an install may pull: the project's images published under registry
// at version (the operator, the target allocator, the OpAMP bridge), the default collector images
// (the operator's built-in one and the chart's -k8s one) and the auto-instrumentation images the
// operator injects by default.
func Images(registry, version string) []string {
	reg := strings.TrimSuffix(registry, "/") + "/"
	ai := instrumentation.DefaultImages()
	list := []string{
		reg + OperatorImage + ":" + version,
		reg + "target-allocator:" + version,
		reg + "operator-opamp-bridge:" + version,
		collector.DefaultCollectorImageRepository + ":" + collector.DefaultCollectorVersion,
		ChartCollectorImage,
		ai.Java, ai.NodeJS, ai.Python, ai.DotNet, ai.Go, ai.ApacheHttpd,
	}
	if ai.Nginx != ai.ApacheHttpd {
		list = append(list, ai.Nginx)
	}
	return list
}
