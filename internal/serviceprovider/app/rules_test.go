package app

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
)

// has reports whether rules allow verb on group/resource (named name, "" for any).
func has(rules []rbacv1.PolicyRule, verb, group, resource, name string) bool {
	in := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		if in(r.Verbs, verb) && in(r.APIGroups, group) && in(r.Resources, resource) &&
			(len(r.ResourceNames) == 0 || (name != "" && slices.Contains(r.ResourceNames, name))) {
			return true
		}
	}
	return false
}

// The provider's CP token has no bind or escalate; instead it holds every rule it grants the
// operator, which is what the API server requires of a subject without them.
func TestMCPRulesHoldWhatTheProviderGrants(t *testing.T) {
	rules := MCPRules()
	for _, r := range rules {
		for _, v := range r.Verbs {
			if v == "bind" || v == "escalate" || v == "impersonate" || v == "*" {
				t.Errorf("provider CP rule %+v has %q", r, v)
			}
		}
	}
	granted := append(cpaccess.OperatorRules(), cpaccess.OperatorNamespaceRules(flux.WebhookCertSecret)...)
	granted = append(granted, cpaccess.OperatorNamespaceRules("user-named")...)
	granted = append(granted, cpaccess.WebhookConfigurationRules(flux.ReleaseOperatorNames("any-cp-workload", nil))...)
	for _, g := range granted {
		names := g.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, grp := range g.APIGroups {
			for _, res := range g.Resources {
				for _, v := range g.Verbs {
					for _, n := range names {
						if !has(rules, v, grp, res, n) {
							t.Errorf("the provider grants %s %s/%s %q but does not hold it", v, grp, res, n)
						}
					}
				}
			}
		}
	}
}
