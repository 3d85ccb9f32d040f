package flux

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// The seed's default: cert-manager off and chart-generated certificates on, unless the user's
// values say otherwise (under opentelemetry-operator, or top-level for our chart).
func TestWorkloadValuesWebhookCertDefaults(t *testing.T) {
	aw := func(v map[string]any, path ...string) any {
		return get(v, append([]string{"opentelemetry-operator", "admissionWebhooks"}, path...)...)
	}
	t.Run("no user values", func(t *testing.T) {
		g := NewWithT(t)
		v := WorkloadValues(nil, nil)
		g.Expect(aw(v, "certManager", "enabled")).To(BeFalse())
		g.Expect(aw(v, "autoGenerateCert", "enabled")).To(BeTrue())
		g.Expect(aw(v, "secretName")).To(Equal(WebhookCertSecret))
	})
	t.Run("user turns cert-manager on", func(t *testing.T) {
		g := NewWithT(t)
		user := map[string]any{"opentelemetry-operator": map[string]any{"admissionWebhooks": map[string]any{
			"certManager": map[string]any{"enabled": true}, "autoGenerateCert": map[string]any{"enabled": false}, "secretName": "mine",
		}}}
		v := WorkloadValues(user, nil)
		g.Expect(aw(v, "certManager", "enabled")).To(BeTrue())
		g.Expect(aw(v, "autoGenerateCert", "enabled")).To(BeFalse())
		g.Expect(aw(v, "secretName")).To(Equal("mine"))
		g.Expect(CertSecretName(user)).To(Equal("mine"))
	})
	t.Run("top-level keys of our chart are not overridden", func(t *testing.T) {
		g := NewWithT(t)
		user := map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}, "secretName": "top"}}
		v := WorkloadValues(user, nil)
		g.Expect(aw(v, "certManager", "enabled")).To(BeNil(), "a nested default would win over the user's top-level value")
		g.Expect(aw(v, "autoGenerateCert", "enabled")).To(BeTrue())
		g.Expect(CertSecretName(user)).To(Equal("top"))
		g.Expect(aw(v, "secretName")).To(BeNil(), "the chart reads the top-level one")
	})
}

// The operator in the workload cluster talks only to the control plane: its Lease and certificate
// Secret must go to the control plane's operator namespace, not to its pod namespace (which does
// not exist there). The args the provider sets are parsed with the operator's own flags.
func TestWorkloadValuesOperatorNamespaceIsTheControlPlanes(t *testing.T) {
	parse := func(g Gomega, v map[string]any) operator.Options {
		var args []string
		for _, a := range get(v, "opentelemetry-operator", "manager", "extraArgs").([]any) {
			args = append(args, a.(string))
		}
		o := operator.DefaultOptions()
		fs := pflag.NewFlagSet("operator", pflag.ContinueOnError)
		o.BindFlags(fs)
		g.Expect(fs.Parse(args)).To(Succeed())
		return o
	}
	t.Run("defaults", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(parse(g, WorkloadValues(nil, nil)).Certs.Namespace).To(Equal(instance.CPNamespace))
	})
	t.Run("user args kept, user namespace replaced", func(t *testing.T) {
		g := NewWithT(t)
		user := map[string]any{"opentelemetry-operator": map[string]any{"manager": map[string]any{
			"extraArgs": []any{"--sync-period=1h", "--webhook-cert-namespace=elsewhere"}}}}
		v := WorkloadValues(user, nil)
		g.Expect(get(v, "opentelemetry-operator", "manager", "extraArgs")).To(Equal([]any{"--sync-period=1h", "--webhook-cert-namespace=" + instance.CPNamespace}))
		g.Expect(parse(g, v).Certs.Namespace).To(Equal(instance.CPNamespace))
	})
	t.Run("top-level extraArgs carried over", func(t *testing.T) {
		g := NewWithT(t)
		v := WorkloadValues(map[string]any{"manager": map[string]any{"extraArgs": []any{"--sync-period=1h"}}}, nil)
		g.Expect(get(v, "opentelemetry-operator", "manager", "extraArgs")).To(Equal([]any{"--sync-period=1h", "--webhook-cert-namespace=" + instance.CPNamespace}))
	})
	t.Run("no workload ServiceAccount mount", func(t *testing.T) {
		// With the mount, the operator would read its pod namespace from it and ignore the flag.
		g := NewWithT(t)
		var d appsv1.Deployment
		g.Expect(yaml.UnmarshalStrict([]byte(OperatorPatch(false)), &d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
	})
}

// The names our chart gives the operator (charts/opentelemetry-operator/README.md, "Objects and
// names"), which the provider must grant in the control plane.
func TestReleaseOperatorNames(t *testing.T) {
	tests := []struct {
		name, release string
		user          map[string]any
		want          OperatorNames
	}{
		{"default", "my-cp-workload", nil, OperatorNames{WebhookCertSecret, "my-cp-workload-opentelemetry-operator-mutation", "my-cp-workload-opentelemetry-operator-validation"}},
		{"release contains the chart name", "x-opentelemetry-operator", nil, OperatorNames{WebhookCertSecret, "x-opentelemetry-operator-mutation", "x-opentelemetry-operator-validation"}},
		{"fullnameOverride nested wins", "r", map[string]any{"fullnameOverride": "top", "opentelemetry-operator": map[string]any{"fullnameOverride": "nested"}},
			OperatorNames{WebhookCertSecret, "nested-mutation", "nested-validation"}},
		{"nameOverride", "r", map[string]any{"nameOverride": "otel"}, OperatorNames{WebhookCertSecret, "r-otel-mutation", "r-otel-validation"}},
		{"cut to 55", strings.Repeat("a", 50), nil, OperatorNames{WebhookCertSecret, strings.Repeat("a", 50) + "-open-mutation", strings.Repeat("a", 50) + "-open-validation"}},
		{"secret name", "r", map[string]any{"opentelemetry-operator": map[string]any{"admissionWebhooks": map[string]any{"secretName": "s"}}},
			OperatorNames{"s", "r-opentelemetry-operator-mutation", "r-opentelemetry-operator-validation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(ReleaseOperatorNames(tt.release, tt.user)).To(Equal(tt.want))
		})
	}
}
