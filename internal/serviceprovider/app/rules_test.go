package app

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
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

func holdsAll(t *testing.T, where string, rules, granted []rbacv1.PolicyRule) {
	t.Helper()
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
							t.Errorf("the provider grants %s %s/%s %q %s but does not hold it there", v, grp, res, n, where)
						}
					}
				}
			}
		}
	}
}

// The provider's CP token has no bind or escalate; instead it holds every rule it grants the
// operator, where it grants it, which is what the API server requires of a subject without them.
// Secrets and ServiceAccount tokens it holds only in the operator's namespace, tokens only of the
// operator's ServiceAccount.
func TestMCPRulesHoldWhatTheProviderGrants(t *testing.T) {
	perms := MCPPermissions()
	var cluster, namespaced []rbacv1.PolicyRule
	for _, p := range perms {
		switch p.Namespace {
		case "":
			cluster = append(cluster, p.Rules...)
		case instance.CPNamespace:
			namespaced = append(namespaced, p.Rules...)
		default:
			t.Errorf("permissions in namespace %q", p.Namespace)
		}
		for _, r := range p.Rules {
			for _, v := range r.Verbs {
				if v == "bind" || v == "escalate" || v == "impersonate" || v == "*" {
					t.Errorf("provider CP rule %+v has %q", r, v)
				}
			}
		}
	}
	holdsAll(t, "cluster-wide", cluster, append(cpaccess.OperatorRules(), cpaccess.WebhookConfigurationRules(flux.InstanceOperatorNames("any", nil))...))
	inNS := append(append([]rbacv1.PolicyRule{}, cluster...), namespaced...)
	holdsAll(t, "in "+instance.CPNamespace, inNS, append(cpaccess.OperatorNamespaceRules(flux.WebhookCertSecret), cpaccess.OperatorNamespaceRules("user-named")...))

	// Least privilege: no Secret or token access outside the operator's namespace, tokens only
	// of its ServiceAccount, no listing everything cluster-wide. Positive control: in the
	// namespace it may.
	for _, verb := range []string{"get", "list", "create", "delete"} {
		if has(cluster, verb, "", "secrets", "") || has(cluster, verb, "", "secrets", "x") {
			t.Errorf("cluster-wide %s on secrets", verb)
		}
	}
	if has(cluster, "list", "x.example", "things", "") {
		t.Error("cluster-wide list on every type")
	}
	if has(cluster, "create", "", "serviceaccounts/token", "") || has(namespaced, "create", "", "serviceaccounts/token", "default") {
		t.Error("tokens of other ServiceAccounts")
	}
	if !has(namespaced, "create", "", "serviceaccounts/token", instance.CPServiceAccount) || !has(namespaced, "list", "", "secrets", "") {
		t.Error("the provider cannot mint the operator's token or list the token holders in its namespace")
	}
}
