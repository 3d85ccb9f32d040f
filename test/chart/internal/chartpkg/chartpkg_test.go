package chartpkg

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/otelop/otelop/internal/testenv"
)

func TestPackageSetsVersionAndAppVersion(t *testing.T) {
	chart := filepath.Join(testenv.RepoRoot(), "charts", "opentelemetry-operator")
	for _, c := range []struct{ in, version, appVersion string }{
		{"v1.2.3", "1.2.3", "1.2.3"},
		{"1.2.3-rc.1", "1.2.3-rc.1", "1.2.3-rc.1"},
		// Not SemVer (git describe on an untagged commit): the chart still validates.
		{"e636da1-dirty", "0.0.0-dev+e636da1-dirty", "e636da1-dirty"},
	} {
		g := NewWithT(t)
		path, err := Package(chart, t.TempDir(), c.in)
		g.Expect(err).NotTo(HaveOccurred(), c.in)
		g.Expect(filepath.Base(path)).To(Equal("opentelemetry-operator-" + c.version + ".tgz"))
		ch, err := loader.Load(path)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ch.Metadata.Version).To(Equal(c.version), c.in)
		g.Expect(ch.Metadata.AppVersion).To(Equal(c.appVersion), c.in)
	}
	_, err := Package(filepath.Join(t.TempDir(), "missing"), t.TempDir(), "1.0.0")
	NewWithT(t).Expect(err).To(HaveOccurred())
}
