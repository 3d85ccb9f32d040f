package collectorconfig

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func errStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func TestValidateSampleIsValid(t *testing.T) {
	g := NewWithT(t)
	errs, warnings := Validate(Parse(mustYAML(t, sampleConfig)), field.NewPath("spec", "config"))
	g.Expect(errs).To(BeEmpty())
	g.Expect(warnings).To(ConsistOf(
		ContainSubstring("spec.config has null values at receivers.jaeger.protocols.grpc, receivers.zipkin;"),
		ContainSubstring(`"jaeger-thrift_compact"`),
	))
}

func TestValidateListsAllProblems(t *testing.T) {
	g := NewWithT(t)
	c := Parse(mustYAML(t, `
receivers:
  otlp:
    protocols:
      grpc: {}
      websocket: {}
  otlp/2:
    protocols:
      grpc:
        endpoint: 0.0.0.0:4317
  zipkin:
    endpoint: "localhost:http"
  1bad: {}
  statsd: "x"
exporters:
  debug: {}
processors:
  batch: {}
connectors:
  count: {}
extensions:
  health_check: {}
service:
  extensions: [health_check, pprof]
  pipelines:
    traces:
      receivers: [otlp, otlp/foo, debug, otlp]
      processors: [batch, nope]
      exporters: [debug, count]
    metrics:
      receivers: [otlp/2, zipkin]
    events:
      receivers: [otlp]
      exporters: [debug]
`))
	errs, _ := Validate(c, field.NewPath("spec", "config"))
	g.Expect(errStrings(errs)).To(ConsistOf(
		`spec.config.receivers.1bad: Invalid value: "1bad": invalid receiver id: the type must start with a letter`,
		`spec.config.receivers.statsd: Invalid value: "string": must be an object (or null)`,
		`spec.config.service.pipelines.events: Unsupported value: "events": supported values: "traces", "metrics", "logs", "profiles"`,
		`spec.config.service.pipelines.metrics.exporters: Required value: a pipeline needs at least one of its exporters`,
		`spec.config.service.pipelines.traces.receivers[1]: Not found: "otlp/foo"`,
		`spec.config.service.pipelines.traces.receivers[2]: Invalid value: "debug": "debug" is defined as a exporter; receivers must name receivers or connectors`,
		`spec.config.service.pipelines.traces.receivers[3]: Duplicate value: "otlp"`,
		`spec.config.service.pipelines.traces.processors[1]: Not found: "nope"`,
		`spec.config.connectors.count: Invalid value: "count": the connector is an exporter in a pipeline but a receiver in none`,
		`spec.config.service.extensions[1]: Not found: "pprof"`,
		`spec.config.receivers.otlp.protocols.websocket: Unsupported value: "websocket": supported values: "grpc", "http"`,
		`spec.config.receivers.zipkin.endpoint: Invalid value: "localhost:http": port "http" must be a number between 1 and 65535 or an ${env:...} reference`,
		`spec.config.receivers.otlp/2.protocols.grpc.endpoint: Invalid value: 4317: port 4317/TCP is also used by receiver "otlp" (receivers.otlp.protocols.grpc)`,
	))
}

func TestValidateShapes(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		want      []string
	}{
		{
			name: "no service",
			cfg:  `{receivers: {}}`,
			want: []string{`cfg.service: Required value: a collector config needs a service with pipelines`},
		},
		{
			name: "no pipelines",
			cfg:  `{service: {}}`,
			want: []string{`cfg.service.pipelines: Required value: at least one pipeline is required`},
		},
		{
			name: "wrong section and list types",
			cfg:  `{receivers: [], foo: 1, service: {extensions: "x", pipelines: {traces: {receivers: "otlp", exporters: [1]}}}}`,
			want: []string{
				`cfg.foo: Unsupported value: "foo": supported keys: receivers, exporters, processors, connectors, extensions, service`,
				`cfg.receivers: Invalid value: "list": must be an object of receiver ids to their configuration`,
				`cfg.service.extensions: Invalid value: "string": must be a list of component ids`,
				`cfg.service.pipelines.traces.receivers: Invalid value: "string": must be a list of component ids`,
				`cfg.service.pipelines.traces.exporters[0]: Invalid value: 1: must be a non-empty component id string`,
			},
		},
		{
			name: "null pipeline, bad endpoint type, port name clash, bad metrics address",
			cfg: `{receivers: {otlp/a_b: {protocols: {grpc: {}}}, otlp/a-b: {protocols: {grpc: {endpoint: ":5317"}}}, zipkin: {endpoint: 9411}},
				exporters: {debug: {}},
				service: {telemetry: {metrics: {address: "0.0.0.0:${env:P}"}},
				  pipelines: {logs: null, traces: {receivers: [otlp/a_b, otlp/a-b, zipkin], exporters: [debug]}}}}`,
			want: []string{
				`cfg.service.pipelines.logs.receivers: Required value: a pipeline needs at least one of its receivers`,
				`cfg.service.pipelines.logs.exporters: Required value: a pipeline needs at least one of its exporters`,
				`cfg.receivers.zipkin.endpoint: Invalid value: "number": must be a string such as 0.0.0.0:4317`,
				`cfg.receivers.otlp/a_b.protocols.grpc: Invalid value: "otlp-a-b-grpc": port name "otlp-a-b-grpc" is also used by receiver "otlp/a-b" (receivers.otlp/a-b.protocols.grpc.endpoint)`,
				`cfg.service.telemetry.metrics: Invalid value: "": service.telemetry.metrics.address: cannot determine the metrics port of "0.0.0.0:${env:P}"`,
			},
		},
		{
			name: "connector used on both sides is fine, udp and tcp on one number is fine",
			cfg: `{receivers: {otlp: {protocols: {grpc: {endpoint: ":6831"}}}, jaeger: {protocols: {thrift_compact: {}}}},
				connectors: {count: {}}, exporters: {debug: {}},
				service: {pipelines: {traces: {receivers: [otlp, jaeger], exporters: [count]}, metrics: {receivers: [count], exporters: [debug]}}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			errs, _ := Validate(Parse(mustYAML(t, tc.cfg)), field.NewPath("cfg"))
			if tc.want == nil {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errStrings(errs)).To(ConsistOf(tc.want))
		})
	}
}

func TestValidateWarnsOnMetricsPortClash(t *testing.T) {
	g := NewWithT(t)
	c := Parse(mustYAML(t, `{receivers: {otlp: {protocols: {grpc: {}}}}, exporters: {prometheus: {}},
		service: {pipelines: {metrics: {receivers: [otlp], exporters: [prometheus]}}}}`))
	errs, warnings := Validate(c, nil)
	g.Expect(errs).To(BeEmpty())
	g.Expect(warnings).To(ConsistOf(ContainSubstring(`exporter "prometheus" listens on port 8888`)))
}

// An endpoint that fails validation is repeated in the error without its credentials or query.
func TestInvalidEndpointErrorsDoNotRepeatCredentials(t *testing.T) {
	g := NewWithT(t)
	c := Parse(mustYAML(t, `
receivers:
  otlp:
    protocols:
      http: {endpoint: "http://user:s3cret@0.0.0.0:99999/?token=t0ken"}
exporters:
  debug: {}
service:
  pipelines:
    traces: {receivers: [otlp], exporters: [debug]}
`))
	errs, _ := Validate(c, field.NewPath("spec", "config"))
	g.Expect(errs).NotTo(BeEmpty())
	msg := errs.ToAggregate().Error()
	g.Expect(msg).To(ContainSubstring("99999"))
	g.Expect(msg).NotTo(ContainSubstring("s3cret"), msg)
	g.Expect(msg).NotTo(ContainSubstring("t0ken"), msg)
}
