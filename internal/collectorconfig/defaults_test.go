package collectorconfig

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/internal/golden"
)

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// roundTrip makes values comparable with JSON-decoded ones (numbers become float64).
func roundTrip(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, string(b))
}

// The inputs and expectations of upstream's defaulting webhook test.
func TestApplyDefaultsMatchesUpstream(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{
			name: "null protocols",
			in:   `{"receivers":{"otlp":{"protocols":{"grpc":null,"http":null}}},"exporters":{"debug":null},"service":{"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`,
			want: `{"receivers":{"otlp":{"protocols":{"grpc":{"endpoint":"0.0.0.0:4317"},"http":{"endpoint":"0.0.0.0:4318"}}}},"exporters":{"debug":null},"service":{"telemetry":{"metrics":{"readers":[{"pull":{"exporter":{"prometheus":{"host":"0.0.0.0","port":8888}}}}]}},"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`,
		},
		{
			name: "leave other fields alone",
			in:   `{"receivers":{"otlp":{"protocols":{"grpc":{"headers":{"example":"another"}},"http":{"endpoint":"0.0.0.0:4000"}}}},"exporters":{"debug":null},"service":{"telemetry":{"metrics":{"readers":[{"pull":{"exporter":{"prometheus":{"host":"localhost","port":9999}}}}]}},"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`,
			want: `{"receivers":{"otlp":{"protocols":{"grpc":{"endpoint":"0.0.0.0:4317","headers":{"example":"another"}},"http":{"endpoint":"0.0.0.0:4000"}}}},"exporters":{"debug":null},"service":{"telemetry":{"metrics":{"readers":[{"pull":{"exporter":{"prometheus":{"host":"localhost","port":9999}}}}]}},"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := decodeJSON(t, tc.in)
			got := ApplyDefaults(in, DefaultOptions{})
			g.Expect(roundTrip(t, got)).To(Equal(decodeJSON(t, tc.want)))
			g.Expect(in).To(Equal(decodeJSON(t, tc.in)), "input must not change")
		})
	}
}

func TestApplyDefaultsCases(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		opts     DefaultOptions
		want     string
	}{
		{
			name: "single port receivers, colon-only endpoint, unknown and unused untouched",
			in: `{receivers: {zipkin: null, statsd: {endpoint: ":9125"}, foo: {endpoint: ":1"}, carbon: {}},
				service: {telemetry: {metrics: {address: ":8888"}}, pipelines: {traces: {receivers: [zipkin, statsd, foo]}}}}`,
			want: `{"receivers":{"zipkin":{"endpoint":"0.0.0.0:9411"},"statsd":{"endpoint":"0.0.0.0:9125"},"foo":{"endpoint":":1"},"carbon":{}},
				"service":{"telemetry":{"metrics":{"address":":8888"}},"pipelines":{"traces":{"receivers":["zipkin","statsd","foo"]}}}}`,
		},
		{
			name: "otlp without protocols, env endpoint kept, health_check and jaeger_query",
			in: `{receivers: {otlp: null, otlp/2: {protocols: {grpc: {endpoint: "${env:POD_IP}:4317"}}}},
				extensions: {health_check: {endpoint: ":13134"}, jaeger_query: {}},
				service: {extensions: [health_check, jaeger_query], telemetry: {metrics: {readers: []}},
				  pipelines: {traces: {receivers: [otlp, otlp/2]}}}}`,
			opts: DefaultOptions{LegacyTelemetryShape: true},
			want: `{"receivers":{"otlp":{"protocols":{}},"otlp/2":{"protocols":{"grpc":{"endpoint":"${env:POD_IP}:4317"}}}},
				"extensions":{"health_check":{"endpoint":"0.0.0.0:13134","path":"/"},"jaeger_query":{"http":{"endpoint":"0.0.0.0:16686"}}},
				"service":{"extensions":["health_check","jaeger_query"],"telemetry":{"metrics":{"readers":[{"pull":{"exporter":{"prometheus":
				  {"host":"0.0.0.0","port":8888,"without_scope_info":false,"without_type_suffix":false,"without_units":false}}}}]}},
				"pipelines":{"traces":{"receivers":["otlp","otlp/2"]}}}}`,
		},
		{
			name: "bad shapes are left alone",
			in: `{receivers: {otlp: {protocols: {grpc: {}, foo: {}}}, zipkin: "x"},
				service: {telemetry: {metrics: "x"}, pipelines: {traces: {receivers: [otlp, zipkin]}}}}`,
			want: `{"receivers":{"otlp":{"protocols":{"grpc":{},"foo":{}}},"zipkin":"x"},
				"service":{"telemetry":{"metrics":"x"},"pipelines":{"traces":{"receivers":["otlp","zipkin"]}}}}`,
		},
		{
			name: "empty config",
			in:   `{}`,
			want: `{"service":{"telemetry":{"metrics":{"readers":[{"pull":{"exporter":{"prometheus":{"host":"0.0.0.0","port":8888}}}}]}}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := ApplyDefaults(mustYAML(t, tc.in), tc.opts)
			g.Expect(roundTrip(t, got)).To(Equal(decodeJSON(t, tc.want)))
		})
	}
}

func TestApplyDefaultsGoldenAndStable(t *testing.T) {
	g := NewWithT(t)
	out := ApplyDefaults(mustYAML(t, sampleConfig), DefaultOptions{})
	first, err := EncodeJSON(out)
	g.Expect(err).NotTo(HaveOccurred())
	for i := 0; i < 20; i++ {
		again, err := EncodeJSON(ApplyDefaults(mustYAML(t, sampleConfig), DefaultOptions{}))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(again)).To(Equal(string(first)))
	}
	// Defaulting is idempotent.
	twice, err := EncodeJSON(ApplyDefaults(roundTrip(t, out), DefaultOptions{}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(twice)).To(Equal(string(first)))
	golden.Check(t, "defaults/sample.json", append(first, '\n'))
}

func TestMetricsEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		host      string
		port      int32
		err       bool
	}{
		{"none", `{}`, "0.0.0.0", 8888, false},
		{"address", `{service: {telemetry: {metrics: {address: "127.0.0.1:9090"}}}}`, "127.0.0.1", 9090, false},
		{"address without port", `{service: {telemetry: {metrics: {address: "${env:POD_IP}"}}}}`, "${env:POD_IP}", 8888, false},
		{"address env port", `{service: {telemetry: {metrics: {address: "0.0.0.0:${env:PORT}"}}}}`, "", 0, true},
		{"reader", `{service: {telemetry: {metrics: {address: ":1", readers: [{periodic: {}}, {pull: {exporter: {prometheus: {port: 9999}}}}]}}}}`, "0.0.0.0", 9999, false},
		{"reader host", `{service: {telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {host: "::"}}}}]}}}}`, "::", 8888, false},
		{"reader bad port", `{service: {telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {port: 70000}}}}]}}}}`, "", 0, true},
		{"no prometheus reader", `{service: {telemetry: {metrics: {readers: [{periodic: {}}]}}}}`, "0.0.0.0", 8888, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			host, port, err := MetricsEndpoint(Parse(mustYAML(t, tc.cfg)))
			if tc.err {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(host).To(Equal(tc.host))
			g.Expect(port).To(Equal(tc.port))
		})
	}
}
