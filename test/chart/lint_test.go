package chart

import (
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// TestLint runs `helm lint --strict` with the default values and with the values of the service
// provider's two releases: no message of any severity is allowed.
func TestLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"default":                     nil,
		"kube-stack CRDs release":     flux.CRDsValues(),
		"kube-stack workload release": flux.WorkloadValues(nil, []string{"pull"}, instance.ID("default", "otel")),
		"cert-manager":                {"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}},
	} {
		t.Run(name, func(t *testing.T) {
			l := action.NewLint()
			l.Strict = true
			l.Namespace = "observability"
			l.KubeVersion = &chartutil.KubeVersion{Version: testenv.K8sVersion, Major: "1", Minor: "37"}
			res := l.Run([]string{chartDir()}, vals)
			for _, err := range res.Errors {
				t.Errorf("lint error: %v", err)
			}
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %v", m)
				} else {
					t.Logf("lint: %v", m)
				}
			}
		})
	}
}
