package chart

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/chart/internal/configrender"
)

// TestGeneratedFilesUpToDate: the chart's files/ folder holds exactly what config/default renders
// now (`make generate` writes it).
func TestGeneratedFilesUpToDate(t *testing.T) {
	want, err := configrender.ChartFiles(testenv.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for d, files := range want {
		dir := filepath.Join(chartDir(), d)
		have, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		tpls, _ := filepath.Glob(filepath.Join(dir, "_*.tpl"))
		have = append(have, tpls...)
		for _, p := range have {
			if _, ok := files[filepath.Base(p)]; !ok {
				t.Errorf("%s is not in config/default any more; run make generate", p)
			}
		}
		for name, data := range files {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != string(data) {
				t.Errorf("%s/%s is stale or missing; run make generate", dir, name)
			}
		}
	}
}
