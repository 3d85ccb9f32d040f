package upgrade

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestRemoveLocalhostDefaultGateEndpoints(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   string
		fields []string
	}{
		{
			name: "used receiver and extension get explicit endpoints",
			config: `{"receivers":{"otlp":{"protocols":{"grpc":{},"http":null}},"otlp/unused":{"protocols":{"grpc":{}}}},
				"exporters":{"debug":{}},"extensions":{"health_check":{}},
				"service":{"extensions":["health_check"],"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`,
			want: `{"receivers":{"otlp":{"protocols":{"grpc":{"endpoint":"0.0.0.0:4317"},"http":{"endpoint":"0.0.0.0:4318"}}},"otlp/unused":{"protocols":{"grpc":{}}}},
				"exporters":{"debug":{}},"extensions":{"health_check":{"endpoint":"0.0.0.0:13133","path":"/"}},
				"service":{"extensions":["health_check"],"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`,
			fields: []string{"spec.config.receivers.otlp", "spec.config.extensions.health_check"},
		},
		{
			name: "explicit endpoints and unknown components are left alone",
			config: `{"receivers":{"otlp":{"protocols":{"grpc":{"endpoint":"localhost:4317"}}},"mystery":{}},"exporters":{"debug":{}},
				"service":{"pipelines":{"traces":{"receivers":["otlp","mystery"],"exporters":["debug"]}}}}`,
			want: `{"receivers":{"otlp":{"protocols":{"grpc":{"endpoint":"localhost:4317"}}},"mystery":{}},"exporters":{"debug":{}},
				"service":{"pipelines":{"traces":{"receivers":["otlp","mystery"],"exporters":["debug"]}}}}`,
		},
		{
			name:   "a receiver of the wrong shape is left alone",
			config: `{"receivers":{"otlp":"nonsense"},"exporters":{},"service":{"pipelines":{"t":{"receivers":["otlp"],"exporters":[]}}}}`,
			want:   `{"receivers":{"otlp":"nonsense"},"exporters":{},"service":{"pipelines":{"t":{"receivers":["otlp"],"exporters":[]}}}}`,
		},
		{
			name:   "no receivers at all",
			config: `{"receivers":null,"exporters":null,"service":{"pipelines":null}}`,
			want:   `{"receivers":null,"exporters":null,"service":{"pipelines":null}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			otelcol := newCollector(t, tt.config, nil, "")
			changes := removeLocalhostDefaultGate(&otelcol.Spec)
			g.Expect(configJSON(t, otelcol)).To(MatchJSON(tt.want))
			g.Expect(fields(changes)).To(Equal(tt.fields))
			g.Expect(notices(changes)).To(Equal(1), "the localhost notice is always given")

			again := removeLocalhostDefaultGate(&otelcol.Spec)
			g.Expect(Rewrites(again)).To(BeFalse())
			g.Expect(configJSON(t, otelcol)).To(MatchJSON(tt.want))
		})
	}
}
