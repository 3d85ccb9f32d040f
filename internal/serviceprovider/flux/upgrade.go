package flux

import (
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

// ChartVersionMatches says whether the chart version a HelmRelease recorded in its history is
// version, the OtelOperator's spec.version (the chart tag). helm-controller records a chart from
// an OCIRepository as its version with the first 12 hex digits of the artifact digest as build
// metadata (1.2.3+0123456789ab), and without a leading "v" (a chart version v1.2.3 is recorded
// as 1.2.3): both are ignored.
func ChartVersionMatches(recorded, version string) bool {
	return bareVersion(recorded) == bareVersion(version) && bareVersion(version) != ""
}

func bareVersion(v string) string {
	v, _, _ = strings.Cut(v, "+")
	return strings.TrimPrefix(v, "v")
}

// InstalledChartVersion is the chart version of the release's latest Helm release (its status
// history), without build metadata, and whether that release is deployed. It is empty before
// the first install.
func InstalledChartVersion(hr *helmv2.HelmRelease) (string, bool) {
	latest := hr.Status.History.Latest()
	if latest == nil {
		return "", false
	}
	v, _, _ := strings.Cut(latest.ChartVersion, "+")
	return v, latest.Status == "deployed"
}

// CRDsReleaseReadyExpr is the CEL expression (helm-controller's dependsOn readyExpr, Flux 2.7 and
// later) with which the workload release waits for the CRDs release of the same chart version:
// the CRDs release is Ready for its current generation and its latest Helm release is deployed
// from version. Without the version, helm-controller's own check would pass on the CRDs release
// still Ready with the old chart, and both releases would upgrade at the same time when the
// shared OCIRepository moves to a new tag. The expression replaces the built-in check, so it
// tests Ready and the generation itself.
func CRDsReleaseReadyExpr(version string) string {
	bare := bareVersion(version)
	return fmt.Sprintf(`has(dep.status) && has(dep.status.observedGeneration) && dep.metadata.generation == dep.status.observedGeneration && `+
		`has(dep.status.conditions) && dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && `+
		`has(dep.status.history) && size(dep.status.history) > 0 && dep.status.history[0].status == 'deployed' && `+
		`dep.status.history[0].chartVersion.split('+')[0] in [%q, %q]`, bare, "v"+bare)
}
