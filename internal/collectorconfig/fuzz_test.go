package collectorconfig

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FuzzConfig feeds arbitrary JSON through every entry point: none may panic, none may modify its
// input, and defaulting must be deterministic.
func FuzzConfig(f *testing.F) {
	f.Add(`{"receivers":{"otlp":{"protocols":{"grpc":null}}},"exporters":{"debug":{}},` +
		`"service":{"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`)
	f.Add(`{"receivers":[],"service":{"pipelines":{"x":{"receivers":[1,null,"a"]}}}}`)
	f.Fuzz(func(t *testing.T, data string) {
		var raw map[string]any
		if err := json.Unmarshal([]byte(data), &raw); err != nil {
			return
		}
		before, err := json.Marshal(raw)
		if err != nil {
			return
		}
		c := Parse(raw)
		ports := InferPorts(c)
		for _, p := range append(ports.Service, ports.Extension...) {
			if p.Port < 1 || p.Port > 65535 || len(p.Name) > maxPortNameLength {
				t.Fatalf("bad inferred port %+v", p)
			}
		}
		_ = RBACRules(c)
		_ = EnvVars(c)
		_ = HealthProbes(c)
		_, _, _ = MetricsEndpoint(c)
		_, _ = Validate(c, field.NewPath("spec", "config"))
		d1, err1 := EncodeJSON(ApplyDefaults(raw, DefaultOptions{}))
		d2, err2 := EncodeJSON(ApplyDefaults(raw, DefaultOptions{}))
		if (err1 == nil) != (err2 == nil) || string(d1) != string(d2) {
			t.Fatalf("defaulting is not deterministic:\n%s\n%s", d1, d2)
		}
		_, _ = RewriteForTargetAllocator(raw, TargetAllocatorOptions{ServiceName: "x-targetallocator", MTLS: true}, nil)
		_, _ = PrometheusScrapeConfigs(raw, nil)
		_ = PrometheusGlobalConfig(raw)
		after, _ := json.Marshal(raw)
		if string(before) != string(after) {
			t.Fatalf("input was modified:\n%s\n%s", before, after)
		}
	})
}

// FuzzEndpointPort checks the endpoint parser never panics and only returns real port numbers.
func FuzzEndpointPort(f *testing.F) {
	for _, s := range []string{"0.0.0.0:4317", "[::1]:80", "http://a:1/b", "${env:X}:${env:Y}", "a:b:c", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		port, found, err := endpointPort(s)
		if found && (port < 1 || port > 65535 || err != nil) {
			t.Fatalf("endpointPort(%q) = %d, %v, %v", s, port, found, err)
		}
		if !found && port != 0 {
			t.Fatalf("endpointPort(%q) returned port %d without finding one", s, port)
		}
		name, _ := PortName(s, 1)
		if len(name) > maxPortNameLength {
			t.Fatalf("PortName(%q) = %q is too long", s, name)
		}
	})
}
