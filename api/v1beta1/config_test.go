package v1beta1

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
)

func TestAnyConfigJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "empty object", in: `{}`, want: `{}`},
		{name: "nested values", in: `{"otlp":{"protocols":{"grpc":{},"http":{"endpoint":"0.0.0.0:4318"}}},"x":[1,"a",null,true]}`,
			want: `{"otlp":{"protocols":{"grpc":{},"http":{"endpoint":"0.0.0.0:4318"}}},"x":[1,"a",null,true]}`},
		{name: "keys are sorted", in: `{"b":1,"a":2}`, want: `{"a":2,"b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var c AnyConfig
			g.Expect(json.Unmarshal([]byte(tt.in), &c)).To(Succeed())
			// Marshal through a value and through a pointer: both must give the same bytes.
			byValue, err := json.Marshal(c)
			g.Expect(err).NotTo(HaveOccurred())
			byPointer, err := json.Marshal(&c)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(byValue)).To(Equal(tt.want))
			g.Expect(string(byPointer)).To(Equal(tt.want))
		})
	}
}

func TestAnyConfigUnmarshalRejectsNonObject(t *testing.T) {
	g := NewWithT(t)
	var c AnyConfig
	g.Expect(json.Unmarshal([]byte(`[1]`), &c)).NotTo(Succeed())
}

func TestConfigFieldOrder(t *testing.T) {
	// The ConfigMap name hashes this encoding, so the key order must stay as upstream's.
	g := NewWithT(t)
	cfg := Config{
		Receivers:  AnyConfig{Object: map[string]any{"otlp": map[string]any{}}},
		Exporters:  AnyConfig{Object: map[string]any{"debug": map[string]any{}}},
		Processors: &AnyConfig{Object: map[string]any{"batch": map[string]any{}}},
		Connectors: &AnyConfig{Object: map[string]any{"count": map[string]any{}}},
		Extensions: &AnyConfig{Object: map[string]any{"health_check": map[string]any{}}},
		Service: Service{
			Extensions: []string{"health_check"},
			Telemetry:  &AnyConfig{Object: map[string]any{"logs": map[string]any{"level": "info"}}},
			Pipelines: map[string]*Pipeline{"traces": {
				Receivers: []string{"otlp"}, Processors: []string{"batch"}, Exporters: []string{"debug"},
			}},
		},
	}
	b, err := json.Marshal(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(Equal(`{"receivers":{"otlp":{}},"exporters":{"debug":{}},"processors":{"batch":{}},` +
		`"connectors":{"count":{}},"extensions":{"health_check":{}},"service":{"extensions":["health_check"],` +
		`"telemetry":{"logs":{"level":"info"}},"pipelines":{"traces":{"exporters":["debug"],"processors":["batch"],"receivers":["otlp"]}}}}`))
}

func TestAnyConfigDeepCopyIsIndependent(t *testing.T) {
	g := NewWithT(t)
	orig := &AnyConfig{Object: map[string]any{
		"a": map[string]any{"b": []any{map[string]any{"c": "d"}}},
		"s": []string{"x"},
		"m": map[string]string{"k": "v"},
	}}
	cp := orig.DeepCopy()
	g.Expect(cp).To(Equal(orig))

	cp.Object["a"].(map[string]any)["b"].([]any)[0].(map[string]any)["c"] = "changed"
	cp.Object["s"].([]string)[0] = "changed"
	cp.Object["m"].(map[string]string)["k"] = "changed"
	g.Expect(orig.Object["a"].(map[string]any)["b"].([]any)[0].(map[string]any)["c"]).To(Equal("d"))
	g.Expect(orig.Object["s"].([]string)[0]).To(Equal("x"))
	g.Expect(orig.Object["m"].(map[string]string)["k"]).To(Equal("v"))

	var nilCfg *AnyConfig
	g.Expect(nilCfg.DeepCopy()).To(BeNil())
}
