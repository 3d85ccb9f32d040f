package upgrade

import (
	"encoding/json"
	"testing"

	"github.com/otelop/otelop/api/v1beta1"
)

// newCollector returns a collector whose spec.config is the given JSON, with the given args and
// status.version.
func newCollector(t testing.TB, config string, args map[string]string, statusVersion string) v1beta1.OpenTelemetryCollector {
	t.Helper()
	var otelcol v1beta1.OpenTelemetryCollector
	otelcol.Name, otelcol.Namespace = "test", "default"
	if err := json.Unmarshal([]byte(config), &otelcol.Spec.Config); err != nil {
		t.Fatalf("bad test config %s: %v", config, err)
	}
	otelcol.Spec.Args = args
	otelcol.Spec.UpgradeStrategy = v1beta1.UpgradeStrategyAutomatic
	otelcol.Status.Version = statusVersion
	return otelcol
}

// configJSON returns spec.config as JSON, for MatchJSON.
func configJSON(t testing.TB, otelcol v1beta1.OpenTelemetryCollector) string {
	t.Helper()
	b, err := json.Marshal(otelcol.Spec.Config)
	if err != nil {
		t.Fatalf("marshalling spec.config: %v", err)
	}
	return string(b)
}

// specJSON returns the whole spec as JSON, to check that something did not change.
func specJSON(t testing.TB, otelcol v1beta1.OpenTelemetryCollector) string {
	t.Helper()
	b, err := json.Marshal(otelcol.Spec)
	if err != nil {
		t.Fatalf("marshalling spec: %v", err)
	}
	return string(b)
}

// fields lists the Field of each rewrite, in order.
func fields(changes []Change) []string {
	var out []string
	for _, c := range changes {
		if c.Rewrite() {
			out = append(out, c.Field)
		}
	}
	return out
}

// notices counts the changes that rewrite nothing.
func notices(changes []Change) int {
	n := 0
	for _, c := range changes {
		if !c.Rewrite() {
			n++
		}
	}
	return n
}
