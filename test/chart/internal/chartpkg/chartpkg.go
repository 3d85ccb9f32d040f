// Package chartpkg packages the Helm chart with a given version (`make chart`, `make release`).
package chartpkg

import (
	"os"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

var nonSemverChars = regexp.MustCompile(`[^0-9A-Za-z.-]+`)

// Package loads the chart in chartDir, sets its appVersion (the operator image's tag) to version
// and its version to version too, or to 0.0.0-dev+<version> when version is not SemVer (e.g. a
// bare commit hash), and writes <name>-<version>.tgz into out. An empty version keeps Chart.yaml's.
// It returns the archive's path.
func Package(chartDir, out, version string) (string, error) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		return "", err
	}
	if v := strings.TrimPrefix(version, "v"); v != "" {
		ch.Metadata.AppVersion = v
		if _, err := semver.StrictNewVersion(v); err == nil {
			ch.Metadata.Version = v
		} else {
			ch.Metadata.Version = "0.0.0-dev+" + strings.Trim(nonSemverChars.ReplaceAllString(v, "."), ".")
		}
	}
	if err := ch.Validate(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(ch, out)
}
