package collectorconfig

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestSplitID(t *testing.T) {
	for _, tc := range []struct{ id, typ, name string }{
		{"otlp", "otlp", ""},
		{"otlp/in", "otlp", "in"},
		{"otlp/a/b", "otlp", "a/b"},
		{"", "", ""},
	} {
		typ, name := SplitID(tc.id)
		if typ != tc.typ || name != tc.name {
			t.Errorf("SplitID(%q) = %q, %q; want %q, %q", tc.id, typ, name, tc.typ, tc.name)
		}
		if ComponentType(tc.id) != tc.typ {
			t.Errorf("ComponentType(%q) = %q", tc.id, ComponentType(tc.id))
		}
	}
}

func TestParseUsedComponents(t *testing.T) {
	g := NewWithT(t)
	c := Parse(mustYAML(t, `
receivers:
  otlp: {}
  zipkin: {}
processors:
  batch: {}
  memory_limiter: {}
exporters:
  debug: {}
  otlp/out: {}
connectors:
  count: {}
  spanmetrics: {}
extensions:
  health_check: {}
  pprof: {}
service:
  extensions: [health_check]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp/out, count]
    metrics/count:
      receivers: [count]
      exporters: [debug]
`))
	ids := func(cs []Component) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	g.Expect(ids(c.UsedComponents(KindReceiver))).To(Equal([]string{"otlp"}))
	g.Expect(ids(c.UsedComponents(KindProcessor))).To(Equal([]string{"batch"}))
	g.Expect(ids(c.UsedComponents(KindExporter))).To(Equal([]string{"debug", "otlp/out"}))
	g.Expect(ids(c.UsedComponents(KindConnector))).To(Equal([]string{"count"}))
	g.Expect(ids(c.UsedComponents(KindExtension))).To(Equal([]string{"health_check"}))
	g.Expect(ids(c.Components(KindReceiver))).To(Equal([]string{"otlp", "zipkin"}))
	g.Expect(c.IsUsed(KindReceiver, "zipkin")).To(BeFalse())
	g.Expect(c.IsUsed(KindConnector, "spanmetrics")).To(BeFalse())

	p, ok := c.Pipeline("metrics/count")
	g.Expect(ok).To(BeTrue())
	g.Expect(p.Signal).To(Equal("metrics"))
	g.Expect(p.Name).To(Equal("count"))
	g.Expect(p.Receivers).To(Equal([]string{"count"}))
	g.Expect(c.Pipelines()).To(HaveLen(2))
	g.Expect(c.Pipelines()[0].ID).To(Equal("metrics/count"))
	g.Expect(c.ServiceExtensions()).To(Equal([]string{"health_check"}))
	comp, ok := c.Component(KindExporter, "otlp/out")
	g.Expect(ok).To(BeTrue())
	g.Expect(comp.Type).To(Equal("otlp"))
	g.Expect(comp.Name).To(Equal("out"))
}

func TestParseToleratesBadShapes(t *testing.T) {
	g := NewWithT(t)
	c := Parse(map[string]any{
		"receivers": "nope",
		"service":   map[string]any{"pipelines": map[string]any{"traces": map[string]any{"receivers": []any{1.0, "otlp"}}}},
		"bogus":     true,
	})
	g.Expect(c.Components(KindReceiver)).To(BeEmpty())
	p, _ := c.Pipeline("traces")
	g.Expect(p.Receivers).To(Equal([]string{"", "otlp"}))
	g.Expect(c.problems).To(HaveLen(3))
}

func TestParseDoesNotModifyInput(t *testing.T) {
	g := NewWithT(t)
	raw := mustYAML(t, sampleConfig)
	before := mustYAML(t, sampleConfig)
	c := Parse(raw)
	_ = InferPorts(c)
	_ = RBACRules(c)
	_, _ = Validate(c, nil)
	_ = ApplyDefaults(raw, DefaultOptions{})
	_, _ = RewriteForTargetAllocator(raw, TargetAllocatorOptions{ServiceName: "x-targetallocator"}, nil)
	g.Expect(raw).To(Equal(before))
}

const sampleConfig = `
receivers:
  otlp:
    protocols:
      grpc: {}
      http:
        endpoint: ":4000"
  jaeger:
    protocols:
      grpc: null
      thrift_compact: {}
  prometheus:
    config:
      scrape_configs:
      - job_name: self
        static_configs:
        - targets: ["0.0.0.0:8888"]
  zipkin: null
processors:
  batch: {}
  k8sattributes: {}
exporters:
  debug: {}
  prometheus:
    endpoint: 0.0.0.0:8889
extensions:
  health_check:
    endpoint: 0.0.0.0:13134
    path: /healthz
service:
  extensions: [health_check]
  pipelines:
    traces:
      receivers: [otlp, jaeger, zipkin]
      processors: [k8sattributes, batch]
      exporters: [debug]
    metrics:
      receivers: [otlp, prometheus]
      exporters: [prometheus]
`
