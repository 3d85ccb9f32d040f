package collectorconfig

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// benchConfig builds a config with n pipelines, each with its own otlp receiver, two processors
// and an exporter, plus shared k8sattributes, a health_check extension and a prometheus receiver.
func benchConfig(n int) map[string]any {
	receivers := map[string]any{"prometheus": map[string]any{"config": map[string]any{
		"scrape_configs": []any{map[string]any{"job_name": "self"}}}}}
	processors := map[string]any{"batch": map[string]any{}, "k8sattributes": map[string]any{
		"extract": map[string]any{"metadata": []any{"k8s.pod.name", "k8s.deployment.name", "k8s.node.name"}}}}
	exporters := map[string]any{}
	pipelines := map[string]any{}
	signals := []string{"traces", "metrics", "logs"}
	for i := 0; i < n; i++ {
		rid := fmt.Sprintf("otlp/r%d", i)
		eid := fmt.Sprintf("otlphttp/e%d", i)
		receivers[rid] = map[string]any{"protocols": map[string]any{
			"grpc": map[string]any{"endpoint": fmt.Sprintf("0.0.0.0:%d", 10000+2*i)},
			"http": map[string]any{"endpoint": fmt.Sprintf("0.0.0.0:%d", 10001+2*i)},
		}}
		exporters[eid] = map[string]any{"endpoint": fmt.Sprintf("https://backend-%d.example.com:4318", i)}
		recv := []any{rid}
		if i == 0 {
			recv = append(recv, "prometheus")
		}
		pipelines[fmt.Sprintf("%s/p%d", signals[i%3], i)] = map[string]any{
			"receivers": recv, "processors": []any{"k8sattributes", "batch"}, "exporters": []any{eid},
		}
	}
	return map[string]any{
		"receivers": receivers, "processors": processors, "exporters": exporters,
		"extensions": map[string]any{"health_check": map[string]any{}},
		"service":    map[string]any{"extensions": []any{"health_check"}, "pipelines": pipelines},
	}
}

// BenchmarkBuildModel20Pipelines measures everything a builder does with a config: parse, ports,
// RBAC, probes, validation, defaults and the canonical encoding used for the ConfigMap hash.
func BenchmarkBuildModel20Pipelines(b *testing.B) {
	raw := benchConfig(20)
	root := field.NewPath("spec", "config")
	if errs, _ := Validate(Parse(raw), root); len(errs) > 0 {
		b.Fatalf("benchmark config is invalid: %v", errs)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		defaulted := ApplyDefaults(raw, DefaultOptions{})
		c := Parse(defaulted)
		ports := InferPorts(c)
		if len(ports.Service) != 40 {
			b.Fatalf("got %d ports", len(ports.Service))
		}
		_ = RBACRules(c)
		_ = HealthProbes(c)
		_ = EnvVars(c)
		if errs, _ := Validate(c, root); len(errs) > 0 {
			b.Fatal(errs)
		}
		if _, err := EncodeJSON(defaulted); err != nil {
			b.Fatal(err)
		}
	}
}
