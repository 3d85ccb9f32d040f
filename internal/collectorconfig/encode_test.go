package collectorconfig

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestEncodeJSONUpstreamOrder(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{
			name: "field order",
			in: `{"service":{"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"],"processors":["batch"],"x":1}},
				"telemetry":{"logs":{"level":"debug"}},"extensions":["health_check"],"unknown":1},
				"extensions":{"health_check":{}},"connectors":{"count":{}},"processors":{"batch":{}},
				"exporters":{"debug":{"verbosity":"detailed"}},"receivers":{"otlp":{"protocols":{"grpc":{}}}},"bogus":1}`,
			want: `{"receivers":{"otlp":{"protocols":{"grpc":{}}}},"exporters":{"debug":{"verbosity":"detailed"}},` +
				`"processors":{"batch":{}},"connectors":{"count":{}},"extensions":{"health_check":{}},` +
				`"service":{"extensions":["health_check"],"telemetry":{"logs":{"level":"debug"}},` +
				`"pipelines":{"traces":{"exporters":["debug"],"processors":["batch"],"receivers":["otlp"]}}}}`,
		},
		{
			name: "absent and null parts",
			in:   `{"processors":null,"service":{"extensions":[],"telemetry":null,"pipelines":{"a":null,"b":{"processors":[]}}}}`,
			want: `{"receivers":null,"exporters":null,"service":{"pipelines":{"a":null,"b":{"exporters":null,"receivers":null}}}}`,
		},
		{
			name: "empty",
			in:   `{}`,
			want: `{"receivers":null,"exporters":null,"service":{"pipelines":null}}`,
		},
		{
			name: "html characters escaped as encoding/json does",
			in:   `{"receivers":{"a":{"x":"<&>"}},"service":{"pipelines":{}}}`,
			want: `{"receivers":{"a":{"x":"\u003c\u0026\u003e"}},"exporters":null,"service":{"pipelines":{}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := EncodeJSON(decodeJSON(t, tc.in))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(got)).To(Equal(tc.want))
		})
	}
}

func TestEncodeJSONError(t *testing.T) {
	g := NewWithT(t)
	_, err := EncodeJSON(map[string]any{"receivers": map[string]any{"x": func() {}}})
	g.Expect(err).To(HaveOccurred())
}
