package upgrade

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/api/v1beta1"
)

// withTelemetry returns a minimal config whose service.telemetry is the given JSON ("" for none).
func withTelemetry(telemetry string) string {
	if telemetry == "" {
		return `{"receivers":{},"exporters":{},"service":{"pipelines":{}}}`
	}
	return `{"receivers":{},"exporters":{},"service":{"pipelines":{},"telemetry":` + telemetry + `}}`
}

func promReader(host, port string) string {
	return `{"pull":{"exporter":{"prometheus":{"host":"` + host + `","port":` + port + `}}}}`
}

func TestTelemetryRoutines(t *testing.T) {
	tests := []struct {
		name      string
		routine   func(*v1beta1.OpenTelemetryCollectorSpec) []Change
		telemetry string
		want      string
		rewrite   bool
		notice    bool
	}{
		// 0.111.0: write out the old default address.
		{name: "0.111: no telemetry", routine: explicitMetricsAddress,
			want: `{"metrics":{"address":"0.0.0.0:8888"}}`, rewrite: true},
		{name: "0.111: other sections kept", routine: explicitMetricsAddress,
			telemetry: `{"logs":{"level":"debug"},"metrics":{"level":"detailed"}}`,
			want:      `{"logs":{"level":"debug"},"metrics":{"level":"detailed","address":"0.0.0.0:8888"}}`, rewrite: true},
		{name: "0.111: empty address", routine: explicitMetricsAddress,
			telemetry: `{"metrics":{"address":""}}`, want: `{"metrics":{"address":"0.0.0.0:8888"}}`, rewrite: true},
		{name: "0.111: empty readers", routine: explicitMetricsAddress,
			telemetry: `{"metrics":{"readers":[]}}`, want: `{"metrics":{"readers":[],"address":"0.0.0.0:8888"}}`, rewrite: true},
		{name: "0.111: address kept", routine: explicitMetricsAddress,
			telemetry: `{"metrics":{"address":"1.2.3.4:9999"}}`, want: `{"metrics":{"address":"1.2.3.4:9999"}}`},
		{name: "0.111: readers kept, no address added", routine: explicitMetricsAddress,
			telemetry: `{"metrics":{"readers":[` + promReader("0.0.0.0", "9090") + `]}}`,
			want:      `{"metrics":{"readers":[` + promReader("0.0.0.0", "9090") + `]}}`},
		{name: "0.111: metrics of another shape", routine: explicitMetricsAddress,
			telemetry: `{"metrics":"odd"}`, want: `{"metrics":"odd"}`},
		// 0.122.0: address becomes a reader.
		{name: "0.122: address to reader", routine: metricsAddressToReader,
			telemetry: `{"logs":{"level":"info"},"resource":{"a":"b"},"metrics":{"level":"basic","address":"0.0.0.0:8888"}}`,
			want:      `{"logs":{"level":"info"},"resource":{"a":"b"},"metrics":{"level":"basic","readers":[` + promReader("0.0.0.0", "8888") + `]}}`,
			rewrite:   true},
		{name: "0.122: appended to existing readers", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"address":"[::]:8889","readers":[{"periodic":{"exporter":{"otlp":{"endpoint":"x:4317"}}}}]}}`,
			want:      `{"metrics":{"readers":[{"periodic":{"exporter":{"otlp":{"endpoint":"x:4317"}}}},` + promReader("::", "8889") + `]}}`,
			rewrite:   true},
		{name: "0.122: same reader already there", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"address":"0.0.0.0:8888","readers":[` + promReader("0.0.0.0", "8888") + `]}}`,
			want:      `{"metrics":{"readers":[` + promReader("0.0.0.0", "8888") + `]}}`, rewrite: true},
		{name: "0.122: env port carried over", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"address":"${env:MY_POD_IP}:${env:PORT}"}}`,
			want:      `{"metrics":{"readers":[` + promReader("${env:MY_POD_IP}", `"${env:PORT}"`) + `]}}`, rewrite: true},
		{name: "0.122: no port means 8888", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"address":"${env:MY_POD_IP}"}}`,
			want:      `{"metrics":{"readers":[` + promReader("${env:MY_POD_IP}", "8888") + `]}}`, rewrite: true},
		{name: "0.122: bad port left with a notice", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"address":"0.0.0.0:99999"}}`, want: `{"metrics":{"address":"0.0.0.0:99999"}}`, notice: true},
		{name: "0.122: readers not a list left with a notice", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"address":"0.0.0.0:8888","readers":"x"}}`, want: `{"metrics":{"address":"0.0.0.0:8888","readers":"x"}}`, notice: true},
		{name: "0.122: no address", routine: metricsAddressToReader,
			telemetry: `{"metrics":{"level":"none"}}`, want: `{"metrics":{"level":"none"}}`},
		{name: "0.122: no telemetry", routine: metricsAddressToReader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			otelcol := newCollector(t, withTelemetry(tt.telemetry), nil, "")
			changes := tt.routine(&otelcol.Spec)
			if tt.want == "" {
				g.Expect(otelcol.Spec.Config.Service.Telemetry).To(BeNil())
			} else {
				g.Expect(configJSON(t, otelcol)).To(MatchJSON(withTelemetry(tt.want)))
			}
			g.Expect(Rewrites(changes)).To(Equal(tt.rewrite))
			g.Expect(notices(changes) > 0).To(Equal(tt.notice))

			again := tt.routine(&otelcol.Spec)
			g.Expect(Rewrites(again)).To(BeFalse(), "a second run rewrites nothing")
		})
	}
}

func TestSplitMetricsAddress(t *testing.T) {
	tests := []struct {
		addr string
		host string
		port any
		ok   bool
	}{
		{"0.0.0.0:8888", "0.0.0.0", float64(8888), true},
		{":8888", "", float64(8888), true},
		{"localhost", "localhost", float64(8888), true},
		{"[::1]:9090", "::1", float64(9090), true},
		{"[::1]", "[::1]", float64(8888), true},
		{"host:${env:PORT}", "host", "${env:PORT}", true},
		{"${env:HOST}:${PORT}", "${env:HOST}", "${PORT}", true},
		{"${env:HOST}", "${env:HOST}", float64(8888), true},
		{"host:0", "", nil, false},
		{"host:65536", "", nil, false},
		{"host:abc", "", nil, false},
		{"host:${a}${b}", "", nil, false},
		{"host:", "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			g := NewWithT(t)
			host, port, ok := splitMetricsAddress(tt.addr)
			g.Expect(ok).To(Equal(tt.ok))
			g.Expect(host).To(Equal(tt.host))
			if tt.port == nil {
				g.Expect(port).To(BeNil())
			} else {
				g.Expect(port).To(Equal(tt.port))
			}
		})
	}
}
