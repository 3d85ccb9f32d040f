package chart

import (
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// TestPackagedChartRendersTheSame: the archive `make chart` writes (chartutil.Save, as
// chart-package does) holds every file the templates read, so it renders what the directory does.
func TestPackagedChartRendersTheSame(t *testing.T) {
	path, err := chartutil.Save(loadChart(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	packaged, err := loader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []release{{}, {values: map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}}}} {
		want := render(t, r)
		got, err := renderChart(t, packaged, r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("packaged chart renders %v, directory %v", names(got), names(want))
		}
	}
}
