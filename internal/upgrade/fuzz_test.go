package upgrade

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/otelop/otelop/api/v1beta1"
)

// FuzzApply feeds arbitrary configs, feature gates and versions through Apply: it must not panic,
// must not modify its input, must be deterministic and idempotent, and must name status.version
// when it cannot parse it.
func FuzzApply(f *testing.F) {
	f.Add(oldConfig, "-confmap.unifyEnvVarExpansion", "0.100.0", "0.140.0", false)
	f.Add(withTelemetry(`{"metrics":{"address":"[::]:${env:P}","readers":[1,null,{"pull":null}]}}`), "", "0.121.0", "", false)
	f.Add(withTelemetry(`{"metrics":{"address":7}}`), ",,-component.UseLocalHostAsDefaultHost,", "v0.1", "0.104.0", false)
	f.Add(`{"receivers":{"otlp":null},"service":{"pipelines":{"a":{"receivers":["otlp"]}}}}`, "", "0.9.0-rc.1", "0.110.0", true)
	f.Add(`{}`, "x", "not-a-version", "0.140.0", false)
	f.Fuzz(func(t *testing.T, config, gates, from, to string, none bool) {
		var otelcol v1beta1.OpenTelemetryCollector
		if err := json.Unmarshal([]byte(config), &otelcol.Spec.Config); err != nil {
			return
		}
		if gates != "" {
			otelcol.Spec.Args = map[string]string{"feature-gates": gates}
		}
		if none {
			otelcol.Spec.UpgradeStrategy = v1beta1.UpgradeStrategyNone
		}
		otelcol.Status.Version = from
		before := mustJSON(t, otelcol)

		out, changes, err := Apply(otelcol, from, to)
		if got := mustJSON(t, otelcol); got != before {
			t.Fatalf("input modified:\n%s\n%s", before, got)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "status.version") && !strings.Contains(err.Error(), "operator's collector version") {
				t.Fatalf("error names neither version: %v", err)
			}
			if mustJSON(t, out) != before {
				t.Fatalf("an error must return the collector unmigrated")
			}
			return
		}
		_ = Summary(changes)
		_ = RecordedVersion(otelcol, to, changes)

		out2, _, _ := Apply(otelcol, from, to)
		if mustJSON(t, out2) != mustJSON(t, out) {
			t.Fatalf("not deterministic")
		}
		again, more, err := Apply(out, from, to)
		if err != nil {
			t.Fatalf("second run failed: %v", err)
		}
		if mustJSON(t, again) != mustJSON(t, out) || Rewrites(more) {
			t.Fatalf("not idempotent: %s\n%s\n%s", Summary(more), mustJSON(t, out), mustJSON(t, again))
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}
