package collector

import (
	"fmt"
	"testing"

	"github.com/otelop/otelop/api/v1beta1"
)

// twentyPipelines returns a defaulted deployment collector whose config has 20 pipelines, each
// with its own otlp receiver, batch processor and otlp exporter, plus health_check.
func twentyPipelines(b *testing.B, opts Options) v1beta1.OpenTelemetryCollector {
	receivers, processors, exporters := map[string]any{}, map[string]any{}, map[string]any{}
	pipelines := map[string]*v1beta1.Pipeline{}
	for i := range 20 {
		r, p, e := fmt.Sprintf("otlp/%d", i), fmt.Sprintf("batch/%d", i), fmt.Sprintf("otlp/%d", i)
		receivers[r] = map[string]any{"protocols": map[string]any{
			"grpc": map[string]any{"endpoint": fmt.Sprintf("0.0.0.0:%d", 10000+2*i)},
			"http": map[string]any{"endpoint": fmt.Sprintf("0.0.0.0:%d", 10001+2*i)},
		}}
		processors[p] = map[string]any{}
		exporters[e] = map[string]any{"endpoint": fmt.Sprintf("backend-%d:4317", i)}
		pipelines[fmt.Sprintf("traces/%d", i)] = &v1beta1.Pipeline{Receivers: []string{r}, Processors: []string{p}, Exporters: []string{e}}
	}
	col := v1beta1.OpenTelemetryCollector{}
	col.Name, col.Namespace = "bench", "observability"
	col.Spec.Config = v1beta1.Config{
		Receivers:  v1beta1.AnyConfig{Object: receivers},
		Processors: &v1beta1.AnyConfig{Object: processors},
		Exporters:  v1beta1.AnyConfig{Object: exporters},
		Extensions: &v1beta1.AnyConfig{Object: map[string]any{"health_check": map[string]any{}}},
		Service:    v1beta1.Service{Extensions: []string{"health_check"}, Pipelines: pipelines},
	}
	if err := ApplyDefaults(&col, opts); err != nil {
		b.Fatal(err)
	}
	return col
}

func BenchmarkBuild20Pipelines(b *testing.B) {
	opts := DefaultOptions()
	col := twentyPipelines(b, opts)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(col, opts); err != nil {
			b.Fatal(err)
		}
	}
}
