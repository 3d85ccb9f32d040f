// Package prometheus holds the operator's PrometheusRule (admission_rules.yaml); its test checks
// that the rules use the metrics the operator exports.
package prometheus

import (
	"os"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

type ruleFile struct {
	Kind string `json:"kind"`
	Spec struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// TestRulesUseExportedMetrics: every metric an alert reads is one admissionmetrics exports, and
// every webhook and outcome label value it matches exists, so that a rename cannot leave an
// alert that never fires. The control: the file has alerts, and each reads at least one metric.
func TestRulesUseExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("admission_rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	metrics := map[string]bool{
		admissionmetrics.AdmissionsName:          true,
		admissionmetrics.DurationName + "_bucket": true,
		admissionmetrics.DurationName + "_count":  true,
		admissionmetrics.DurationName + "_sum":    true,
	}
	outcomes := map[string]bool{}
	for _, o := range []admissionmetrics.Outcome{admissionmetrics.Injected, admissionmetrics.Skipped,
		admissionmetrics.Allowed, admissionmetrics.Refused, admissionmetrics.Error} {
		outcomes[string(o)] = true
	}
	names := regexp.MustCompile(`otelop_[a-z_]+`)
	outcome := regexp.MustCompile(`outcome="([^"]*)"`)
	webhook := regexp.MustCompile(`webhook="([^"]*)"`)
	alerts := 0
	for _, g := range f.Spec.Groups {
		for _, r := range g.Rules {
			alerts++
			used := names.FindAllString(r.Expr, -1)
			if len(used) == 0 {
				t.Errorf("%s reads no operator metric", r.Alert)
			}
			for _, n := range used {
				if !metrics[n] {
					t.Errorf("%s reads %s, which the operator does not export", r.Alert, n)
				}
			}
			for _, m := range outcome.FindAllStringSubmatch(r.Expr, -1) {
				if !outcomes[m[1]] {
					t.Errorf("%s matches outcome %q, which is never recorded", r.Alert, m[1])
				}
			}
			for _, m := range webhook.FindAllStringSubmatch(r.Expr, -1) {
				if m[1] != podmutation.MetricName {
					t.Errorf("%s matches webhook %q; the pod webhook is %q", r.Alert, m[1], podmutation.MetricName)
				}
			}
		}
	}
	if f.Kind != "PrometheusRule" || alerts < 2 {
		t.Fatalf("kind %q with %d alerts, want a PrometheusRule with the admission alerts", f.Kind, alerts)
	}
}
