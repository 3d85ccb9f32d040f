package upgrade

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/api/v1beta1"
)

// oldConfig has every shape the kept routines migrate: a prometheus receiver, an otlp receiver
// without endpoints, and no telemetry.
const oldConfig = `{"receivers":{"prometheus":{"config":{"scrape_configs":[]}},"otlp":{"protocols":{"grpc":{}}}},
	"exporters":{"debug":{}},
	"service":{"pipelines":{"metrics":{"receivers":["prometheus","otlp"],"exporters":["debug"]}}}}`

func TestApplyVersions(t *testing.T) {
	tests := []struct {
		name     string
		from     string
		to       string
		strategy v1beta1.UpgradeStrategy
		migrates bool
		err      string
	}{
		{name: "new collector", from: "", to: "0.140.0"},
		{name: "same version", from: "0.140.0", to: "0.140.0"},
		{name: "newer than the operator", from: "0.150.0", to: "0.140.0"},
		{name: "older", from: "0.100.0", to: "0.140.0", migrates: true},
		{name: "v prefix and pre-release", from: "v0.109.0-rc.1", to: "v0.140.0", migrates: true},
		{name: "two components", from: "0.100", to: "0.140.0", migrates: true},
		{name: "empty target means newest", from: "0.100.0", to: "", migrates: true},
		{name: "upgradeStrategy none", from: "0.100.0", to: "0.140.0", strategy: v1beta1.UpgradeStrategyNone},
		{name: "unparsable status.version", from: "latest", to: "0.140.0", err: `status.version "latest"`},
		{name: "garbage status.version", from: "1.-2", to: "0.140.0", err: "status.version"},
		{name: "unparsable target", from: "0.100.0", to: "main", err: `collector version "main"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := newCollector(t, oldConfig, nil, tt.from)
			if tt.strategy != "" {
				in.Spec.UpgradeStrategy = tt.strategy
			}
			out, changes, err := Apply(in, tt.from, tt.to)
			if tt.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.err)))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(Rewrites(changes)).To(Equal(tt.migrates))
			if !tt.migrates {
				g.Expect(changes).To(BeEmpty())
				g.Expect(specJSON(t, out)).To(Equal(specJSON(t, in)))
			}
		})
	}
}

// TestApplyChain migrates a collector last managed by upstream 0.100.0 to 0.140.0.
func TestApplyChain(t *testing.T) {
	g := NewWithT(t)
	in := newCollector(t, oldConfig, map[string]string{"feature-gates": "+some.gate"}, "0.100.0")
	out, changes, err := Apply(in, "0.100.0", "0.140.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Spec.Args).To(Equal(map[string]string{"feature-gates": "+some.gate"}))
	g.Expect(configJSON(t, out)).To(MatchJSON(`{
		"receivers":{"prometheus":{"config":{"scrape_configs":[]}},"otlp":{"protocols":{"grpc":{"endpoint":"0.0.0.0:4317"}}}},
		"exporters":{"debug":{}},
		"service":{"pipelines":{"metrics":{"receivers":["prometheus","otlp"],"exporters":["debug"]}},
			"telemetry":{"metrics":{"readers":[{"pull":{"exporter":{"prometheus":{"host":"0.0.0.0","port":8888}}}}]}}}}`))
	g.Expect(fields(changes)).To(Equal([]string{
		"spec.config.receivers.otlp",
		"spec.config.service.telemetry.metrics.address",
		"spec.config.service.telemetry.metrics",
	}))
	g.Expect(notices(changes)).To(Equal(1))
	versions := make([]string, len(changes))
	for i, c := range changes {
		versions[i] = c.Version
	}
	g.Expect(versions).To(Equal([]string{"0.110.0", "0.110.0", "0.111.0", "0.122.0"}))
	g.Expect(Summary(changes)).To(ContainSubstring("0.122.0 spec.config.service.telemetry.metrics: replaced address"))
}

func TestApplyDroppedNotice(t *testing.T) {
	tests := []struct {
		from string
		want string
	}{
		{"0.8.0", "0.9.0, 0.15.0, 0.19.0, 0.24.0, 0.31.0, 0.36.0, 0.38.0, 0.39.0, 0.41.0, 0.43.0, 0.57.2, 0.61.0"},
		{"0.57.2", "routines for 0.61.0 are not applied"},
		{"0.61.0", ""},
		{"0.1.0", "0.9.0, 0.15.0"},
	}
	for _, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			g := NewWithT(t)
			_, changes, err := Apply(newCollector(t, oldConfig, nil, tt.from), tt.from, "0.140.0")
			g.Expect(err).NotTo(HaveOccurred())
			if tt.want == "" {
				g.Expect(Summary(changes)).NotTo(ContainSubstring("predates"))
				return
			}
			g.Expect(changes[0].Rewrite()).To(BeFalse())
			g.Expect(changes[0].Message).To(ContainSubstring("predates"))
			g.Expect(changes[0].Message).To(ContainSubstring(tt.want))
		})
	}
}

// TestApplyPure checks, for every kind of input, that Apply leaves its input alone, that a second
// run on its output rewrites nothing and returns the same spec, and that it is deterministic.
func TestApplyPure(t *testing.T) {
	configs := []string{
		oldConfig,
		withTelemetry(`{"metrics":{"address":"0.0.0.0:8888"}}`),
		withTelemetry(`{"metrics":{"address":"1.2.3.4:9999","readers":[` + promReader("0.0.0.0", "8888") + `]}}`),
		withTelemetry(`{"metrics":{"address":"host:${env:PORT}"}}`),
		withTelemetry(`{"metrics":null}`),
		`{"receivers":null,"exporters":null,"service":{"pipelines":null}}`,
	}
	argSets := []map[string]string{
		nil,
		{"feature-gates": "-confmap.unifyEnvVarExpansion,-component.UseLocalHostAsDefaultHost"},
		{"feature-gates": ""},
	}
	for _, from := range []string{"0.90.0", "0.104.0", "0.110.0", "0.121.0"} {
		for _, to := range []string{"0.104.5", "0.111.0", "0.140.0", ""} {
			for _, cfg := range configs {
				for _, args := range argSets {
					in := newCollector(t, cfg, args, from)
					before := specJSON(t, in)
					out, changes, err := Apply(in, from, to)
					g := NewWithT(t)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(specJSON(t, in)).To(Equal(before), "input modified (%s -> %s)", from, to)

					out2, changes2, err := Apply(in, from, to)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(specJSON(t, out2)).To(Equal(specJSON(t, out)), "not deterministic")
					g.Expect(changes2).To(Equal(changes))

					again, more, err := Apply(out, from, to)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(specJSON(t, again)).To(Equal(specJSON(t, out)), "not idempotent (%s -> %s, %s)", from, to, cfg)
					g.Expect(Rewrites(more)).To(BeFalse(), "second run rewrote: %s", Summary(more))
				}
			}
		}
	}
}

func TestApplyDoesNotShareMemory(t *testing.T) {
	g := NewWithT(t)
	in := newCollector(t, withTelemetry(`{"metrics":{"level":"basic"}}`), map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost"}, "0.100.0")
	before := specJSON(t, in)
	out, _, err := Apply(in, "0.100.0", "0.140.0")
	g.Expect(err).NotTo(HaveOccurred())
	out.Spec.Args["x"] = "y"
	out.Spec.Config.Service.Telemetry.Object["metrics"].(map[string]any)["level"] = "none"
	g.Expect(specJSON(t, in)).To(Equal(before))
}

func TestRecordedVersion(t *testing.T) {
	rewrite := []Change{{Version: "0.122.0", Field: "spec.config.service.telemetry.metrics", Message: "m"}}
	notice := []Change{{Version: "0.110.0", Message: "m"}}
	tests := []struct {
		name     string
		status   string
		to       string
		strategy v1beta1.UpgradeStrategy
		changes  []Change
		want     string
	}{
		{name: "new collector", status: "", to: "0.140.0", want: "0.140.0"},
		{name: "migrated, nothing left to rewrite", status: "0.100.0", to: "0.140.0", changes: notice, want: "0.140.0"},
		{name: "spec still needs the migration", status: "0.100.0", to: "0.140.0", changes: rewrite, want: "0.100.0"},
		{name: "upgradeStrategy none", status: "0.100.0", to: "0.140.0", strategy: v1beta1.UpgradeStrategyNone, want: "0.100.0"},
		{name: "never backwards", status: "0.150.0", to: "0.140.0", want: "0.150.0"},
		{name: "unparsable status replaced", status: "latest", to: "0.140.0", want: "0.140.0"},
		{name: "no target", status: "0.100.0", to: "", want: "0.100.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			otelcol := newCollector(t, oldConfig, nil, tt.status)
			if tt.strategy != "" {
				otelcol.Spec.UpgradeStrategy = tt.strategy
			}
			g.Expect(RecordedVersion(otelcol, tt.to, tt.changes)).To(Equal(tt.want))
		})
	}
}

func TestChangeStrings(t *testing.T) {
	g := NewWithT(t)
	changes := []Change{
		{Version: "0.110.0", Field: "spec.args.feature-gates", Message: "removed x"},
		{Version: "0.110.0", Message: "check y"},
	}
	g.Expect(Summary(changes)).To(Equal("0.110.0 spec.args.feature-gates: removed x; 0.110.0: check y"))
	g.Expect(Summary(nil)).To(BeEmpty())
	g.Expect(Rewrites(changes[1:])).To(BeFalse())
	g.Expect(Rewrites(changes)).To(BeTrue())
}
