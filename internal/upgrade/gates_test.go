package upgrade

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/api/v1beta1"
)

const (
	promConfig = `{"receivers":{"prometheus/k8s":{"config":{}}},"exporters":{"debug":{}},"service":{"pipelines":{}}}`
	otlpConfig = `{"receivers":{"otlp":{"protocols":{"grpc":{"endpoint":"0.0.0.0:4317"}}}},"exporters":{"debug":{}},"service":{"pipelines":{}}}`
)

func TestGateRoutines(t *testing.T) {
	tests := []struct {
		name    string
		routine func(*v1beta1.OpenTelemetryCollectorSpec) []Change
		config  string
		args    map[string]string
		want    map[string]string
		changed bool
	}{
		// 0.104.0, prometheus receivers: disable the expansion gate.
		{"0.104 expansion: no args", disableEnvVarExpansionGate, promConfig, nil,
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion"}, true},
		{"0.104 expansion: empty value", disableEnvVarExpansionGate, promConfig, map[string]string{"feature-gates": " "},
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion"}, true},
		{"0.104 expansion: other gates kept", disableEnvVarExpansionGate, promConfig, map[string]string{"feature-gates": "+a,-b", "x": "y"},
			map[string]string{"feature-gates": "+a,-b,-confmap.unifyEnvVarExpansion", "x": "y"}, true},
		{"0.104 expansion: user's choice stands", disableEnvVarExpansionGate, promConfig, map[string]string{"feature-gates": "+confmap.unifyEnvVarExpansion"},
			map[string]string{"feature-gates": "+confmap.unifyEnvVarExpansion"}, false},
		{"0.104 expansion: no prometheus receiver", disableEnvVarExpansionGate, otlpConfig, nil, nil, false},
		// 0.104.0: disable the localhost gate for everyone.
		{"0.104 localhost: no args", disableLocalhostDefaultGate, otlpConfig, nil,
			map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost"}, true},
		{"0.104 localhost: appended", disableLocalhostDefaultGate, otlpConfig, map[string]string{"feature-gates": "a"},
			map[string]string{"feature-gates": "a,-component.UseLocalHostAsDefaultHost"}, true},
		{"0.104 localhost: already there", disableLocalhostDefaultGate, otlpConfig, map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost"},
			map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost"}, false},
		// 0.105.0: take the expansion gate back out.
		{"0.105: only entry", removeEnvVarExpansionGate, promConfig, map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion", "x": "y"},
			map[string]string{"x": "y"}, true},
		{"0.105: among others, spaces", removeEnvVarExpansionGate, promConfig, map[string]string{"feature-gates": "a, -confmap.unifyEnvVarExpansion ,b"},
			map[string]string{"feature-gates": "a,b"}, true},
		{"0.105: enabled form kept", removeEnvVarExpansionGate, promConfig, map[string]string{"feature-gates": "+confmap.unifyEnvVarExpansion"},
			map[string]string{"feature-gates": "+confmap.unifyEnvVarExpansion"}, false},
		{"0.105: no prometheus receiver, as upstream", removeEnvVarExpansionGate, otlpConfig, map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion"},
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion"}, false},
		{"0.105: no args", removeEnvVarExpansionGate, promConfig, nil, nil, false},
		// 0.110.0: the localhost gate is stable.
		{"0.110: removed", removeLocalhostDefaultGate, otlpConfig, map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost,-other"},
			map[string]string{"feature-gates": "-other"}, true},
		{"0.110: nothing to remove", removeLocalhostDefaultGate, otlpConfig, map[string]string{"feature-gates": "-other"},
			map[string]string{"feature-gates": "-other"}, false},
		{"0.110: similar name kept", removeLocalhostDefaultGate, otlpConfig, map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHostX"},
			map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHostX"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			otelcol := newCollector(t, tt.config, tt.args, "")
			changes := tt.routine(&otelcol.Spec)
			if tt.want == nil {
				g.Expect(otelcol.Spec.Args).To(BeEmpty())
			} else {
				g.Expect(otelcol.Spec.Args).To(Equal(tt.want))
			}
			if tt.changed {
				g.Expect(fields(changes)).To(ContainElement("spec.args.feature-gates"))
			} else {
				g.Expect(fields(changes)).NotTo(ContainElement("spec.args.feature-gates"))
			}
			// A second run changes nothing more.
			again := tt.routine(&otelcol.Spec)
			g.Expect(fields(again)).NotTo(ContainElement("spec.args.feature-gates"))
		})
	}
}

// TestTransitionalGates checks that the 0.104.0 gates are added only for a target before the
// version that removes them again, and that the pair collapses to the removal otherwise.
func TestTransitionalGates(t *testing.T) {
	tests := []struct {
		name   string
		config string
		args   map[string]string
		from   string
		to     string
		want   map[string]string
	}{
		{"target 0.104.1: both gates added", promConfig, nil, "0.103.0", "0.104.1",
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion,-component.UseLocalHostAsDefaultHost"}},
		{"target 0.105.0: only the localhost gate", promConfig, nil, "0.103.0", "0.105.0",
			map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost"}},
		{"target 0.140.0: nothing added", promConfig, nil, "0.103.0", "0.140.0", nil},
		{"from 0.104.0: upstream's additions removed", promConfig,
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion,-component.UseLocalHostAsDefaultHost"}, "0.104.0", "0.140.0", map[string]string{}},
		{"from 0.105.0: only the localhost gate removed", promConfig,
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion,-component.UseLocalHostAsDefaultHost"}, "0.105.0", "0.140.0",
			map[string]string{"feature-gates": "-confmap.unifyEnvVarExpansion"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			out, _, err := Apply(newCollector(t, tt.config, tt.args, tt.from), tt.from, tt.to)
			g.Expect(err).NotTo(HaveOccurred())
			if tt.want == nil {
				g.Expect(out.Spec.Args).To(BeNil())
			} else {
				g.Expect(out.Spec.Args).To(Equal(tt.want))
			}
		})
	}
}
