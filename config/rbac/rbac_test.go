// Package rbac_test checks the shipped RBAC (role.yaml, generated from the markers in
// internal/operator/rbac.go) against what the operator does: it must cover every rule the operator
// can put into a collector's ClusterRole (the API server refuses to let a user without `escalate`
// grant what it does not hold), and it must stay narrow.
package rbac_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/webhook/certs"
)

// k8sObjectsCommon are the objects a k8sobjects receiver may name for which the operator can
// grant read access. Other objects need an extra ClusterRole bound to the operator (see README).
var k8sObjectsCommon = []struct{ group, resource string }{
	{"", "pods"}, {"", "events"}, {"", "namespaces"}, {"", "nodes"}, {"", "services"},
	{"", "endpoints"}, {"", "configmaps"}, {"", "serviceaccounts"}, {"", "persistentvolumes"},
	{"", "persistentvolumeclaims"}, {"", "replicationcontrollers"}, {"", "resourcequotas"},
	{"apps", "deployments"}, {"apps", "daemonsets"}, {"apps", "statefulsets"}, {"apps", "replicasets"},
	{"batch", "jobs"}, {"batch", "cronjobs"}, {"autoscaling", "horizontalpodautoscalers"},
	{"policy", "poddisruptionbudgets"}, {"networking.k8s.io", "ingresses"},
	{"discovery.k8s.io", "endpointslices"}, {"events.k8s.io", "events"},
}

// widest is, for every component that produces RBAC rules, the configuration that makes it
// produce the most rules.
func widest() map[collectorconfig.Kind]map[string]map[string]any {
	var objects []any
	for _, o := range k8sObjectsCommon {
		for _, mode := range []string{"pull", "watch"} {
			objects = append(objects, map[string]any{"group": o.group, "name": o.resource, "mode": mode})
		}
	}
	return map[collectorconfig.Kind]map[string]map[string]any{
		collectorconfig.KindReceiver: {
			"k8s_cluster":  {"distribution": "openshift"},
			"k8s_events":   {},
			"k8sobjects":   {"objects": objects},
			"kubeletstats": {"extra_metadata_labels": []any{"container.id"}},
		},
		collectorconfig.KindProcessor: {
			"k8sattributes": {"extract": map[string]any{
				"metadata":    []any{"k8s.deployment.name", "k8s.node.name", "k8s.cronjob.uid"},
				"labels":      []any{map[string]any{"from": "cronjob"}},
				"annotations": []any{map[string]any{"from": "job"}},
			}},
			"resourcedetection": {"detectors": []any{"k8snode", "openshift"}},
		},
		collectorconfig.KindExtension: {
			"k8s_observer":       {"observe_pods": true, "observe_services": true, "observe_nodes": true},
			"k8s_leader_elector": {},
		},
	}
}

// collectorConfig is a minimal collector configuration that uses one component of kind with cfg.
func collectorConfig(kind collectorconfig.Kind, typ string, cfg map[string]any) map[string]any {
	raw := map[string]any{
		"receivers": map[string]any{"otlp": map[string]any{}},
		"exporters": map[string]any{"debug": map[string]any{}},
	}
	pipeline := map[string]any{"receivers": []any{"otlp"}, "exporters": []any{"debug"}}
	service := map[string]any{"pipelines": map[string]any{"metrics": pipeline}}
	switch kind {
	case collectorconfig.KindReceiver:
		raw["receivers"] = map[string]any{typ: cfg}
		pipeline["receivers"] = []any{typ}
	case collectorconfig.KindProcessor:
		raw["processors"] = map[string]any{typ: cfg}
		pipeline["processors"] = []any{typ}
	case collectorconfig.KindExporter:
		raw["exporters"] = map[string]any{typ: cfg}
		pipeline["exporters"] = []any{typ}
	case collectorconfig.KindExtension:
		raw["extensions"] = map[string]any{typ: cfg}
		service["extensions"] = []any{typ}
	}
	raw["service"] = service
	return raw
}

// shipped returns the ClusterRole and the Role of role.yaml.
func shipped(t *testing.T) (*rbacv1.ClusterRole, *rbacv1.Role) {
	t.Helper()
	data, err := os.ReadFile("role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cr *rbacv1.ClusterRole
	var r *rbacv1.Role
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "---" {
			continue
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ClusterRole":
			cr = &rbacv1.ClusterRole{}
			err = yaml.UnmarshalStrict(doc, cr)
		case "Role":
			r = &rbacv1.Role{}
			err = yaml.UnmarshalStrict(doc, r)
		default:
			err = fmt.Errorf("unexpected kind %q in role.yaml", meta.Kind)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if cr == nil || r == nil {
		t.Fatal("role.yaml must hold the ClusterRole manager-role and the Role manager-role; run `make generate`")
	}
	return cr, r
}

// access is one (group, resource, verb, name) a rule allows; name is empty for "any".
type access struct{ group, resource, verb, name string }

func expand(r rbacv1.PolicyRule) []access {
	names := r.ResourceNames
	if len(names) == 0 {
		names = []string{""}
	}
	var out []access
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				for _, n := range names {
					out = append(out, access{g, res, v, n})
				}
			}
		}
	}
	return out
}

func matches(list []string, s string) bool {
	return slices.Contains(list, s) || slices.Contains(list, "*")
}

// covered reports whether rules allow a; a rule limited by resourceNames covers only those names.
func covered(rules []rbacv1.PolicyRule, a access) bool {
	for _, r := range rules {
		if !matches(r.APIGroups, a.group) || !matches(r.Resources, a.resource) || !matches(r.Verbs, a.verb) {
			continue
		}
		if len(r.ResourceNames) == 0 || (a.name != "" && slices.Contains(r.ResourceNames, a.name)) {
			return true
		}
	}
	return false
}

// missing returns the parts of want that rules do not cover, as rules (one per group/resource).
func missing(rules []rbacv1.PolicyRule, want rbacv1.PolicyRule) []rbacv1.PolicyRule {
	byKey := map[[3]string][]string{}
	for _, a := range expand(want) {
		if !covered(rules, a) {
			k := [3]string{a.group, a.resource, a.name}
			byKey[k] = append(byKey[k], a.verb)
		}
	}
	var out []rbacv1.PolicyRule
	for k, verbs := range byKey {
		r := rbacv1.PolicyRule{APIGroups: []string{k[0]}, Resources: []string{k[1]}, Verbs: verbs}
		if k[2] != "" {
			r.ResourceNames = []string{k[2]}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return ruleString(out[i]) < ruleString(out[j]) })
	return out
}

func ruleString(r rbacv1.PolicyRule) string {
	s := fmt.Sprintf("{apiGroups: %q, resources: %q, verbs: %q", r.APIGroups, r.Resources, r.Verbs)
	if len(r.ResourceNames) > 0 {
		s += fmt.Sprintf(", resourceNames: %q", r.ResourceNames)
	}
	return s + "}"
}

// TestShippedRoleCoversGrantableRules derives, from the component registry, every rule the
// operator can put into a collector's ClusterRole and fails, naming the rule, when the shipped
// ClusterRole does not cover it.
func TestShippedRoleCoversGrantableRules(t *testing.T) {
	cr, _ := shipped(t)
	cases := widest()
	for kind, types := range collectorconfig.RBACComponentTypes() {
		for _, typ := range types {
			cfg, ok := cases[kind][typ]
			if !ok {
				t.Errorf("%s %q produces RBAC rules but has no case in widest(): add its widest configuration", kind, typ)
				continue
			}
			rules := collectorconfig.RBACRules(collectorconfig.Parse(collectorConfig(kind, typ, cfg)))
			if len(rules) == 0 {
				t.Errorf("%s %q: its widest configuration produced no rules; the test case is wrong", kind, typ)
			}
			for _, r := range rules {
				for _, m := range missing(cr.Rules, r) {
					t.Errorf("config/rbac/role.yaml does not cover %s, which the operator grants for %s %q: add it to the markers in internal/operator/rbac.go and run `make generate`",
						ruleString(m), kind, typ)
				}
			}
		}
	}
}

// TestShippedRoleStaysNarrow pins the narrowing choices documented in docs/differences.md.
func TestShippedRoleStaysNarrow(t *testing.T) {
	cr, role := shipped(t)
	for _, r := range cr.Rules {
		for _, v := range r.Verbs {
			if v == "*" || v == "escalate" || v == "bind" || v == "impersonate" {
				t.Errorf("ClusterRole rule %s has verb %q", ruleString(r), v)
			}
		}
		if slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
			t.Errorf("ClusterRole rule %s uses a wildcard", ruleString(r))
		}
		if slices.Contains(r.Resources, "secrets") {
			t.Errorf("ClusterRole rule %s reaches Secrets in every namespace; only the webhook certificate Secret in the operator's namespace is used (Role)", ruleString(r))
		}
		for _, res := range []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations", "customresourcedefinitions"} {
			if slices.Contains(r.Resources, res) && len(r.ResourceNames) == 0 &&
				(slices.Contains(r.Verbs, "patch") || slices.Contains(r.Verbs, "update") || slices.Contains(r.Verbs, "delete") || slices.Contains(r.Verbs, "create")) {
				t.Errorf("ClusterRole rule %s writes %s without resourceNames", ruleString(r), res)
			}
		}
	}
	// The names in resourceNames are the operator's defaults.
	d := operator.DefaultOptions()
	wantCluster := []access{
		{"apiextensions.k8s.io", "customresourcedefinitions", "patch", certs.CollectorCRD},
		{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch", certs.DefaultMutatingWebhookConfiguration},
		{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "get", certs.DefaultMutatingWebhookConfiguration},
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "patch", certs.DefaultValidatingWebhookConfiguration},
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "get", certs.DefaultValidatingWebhookConfiguration},
	}
	for _, a := range wantCluster {
		if !covered(cr.Rules, a) {
			t.Errorf("ClusterRole does not allow %+v, which the certificate rotator needs", a)
		}
	}
	wantRole := []access{
		{"", "secrets", "get", d.Certs.SecretName}, {"", "secrets", "update", d.Certs.SecretName}, {"", "secrets", "create", ""},
		{"coordination.k8s.io", "leases", "get", d.LeaderElectionID}, {"coordination.k8s.io", "leases", "update", d.LeaderElectionID},
		{"coordination.k8s.io", "leases", "create", ""},
	}
	for _, a := range wantRole {
		if !covered(role.Rules, a) {
			t.Errorf("Role does not allow %+v in the operator's namespace", a)
		}
	}
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "secrets") && len(r.ResourceNames) == 0 && !slices.Equal(r.Verbs, []string{"create"}) {
			t.Errorf("Role rule %s reaches every Secret of the namespace; only create cannot be limited by name", ruleString(r))
		}
	}
	if !strings.HasPrefix(cr.Name, "manager-role") || role.Namespace != "system" {
		t.Errorf("unexpected role names %q, %s/%s", cr.Name, role.Namespace, role.Name)
	}
}

// TestShippedRoleLeasesOnlyWhatIsGranted: the ClusterRole's rights on the cluster's Leases
// (kube-node-lease's node heartbeats and kube-system's controller leases included) are exactly
// what the operator grants to collectors (k8s_leader_elector: client-go's Lease lock gets, creates
// and updates its Lease), never delete, patch, list or watch; the operator's own Lease is covered
// by name in the Role. Failing before the fix: the ClusterRole held all seven verbs.
func TestShippedRoleLeasesOnlyWhatIsGranted(t *testing.T) {
	cr, _ := shipped(t)
	granted := map[string]bool{}
	cases := widest()
	for kind, types := range collectorconfig.RBACComponentTypes() {
		for _, typ := range types {
			for _, r := range collectorconfig.RBACRules(collectorconfig.Parse(collectorConfig(kind, typ, cases[kind][typ]))) {
				if matches(r.APIGroups, "coordination.k8s.io") && matches(r.Resources, "leases") {
					for _, v := range r.Verbs {
						granted[v] = true
					}
				}
			}
		}
	}
	if len(granted) == 0 {
		t.Fatal("no component grants Lease rights; the test case is wrong (k8s_leader_elector does)")
	}
	for _, r := range cr.Rules {
		if !matches(r.APIGroups, "coordination.k8s.io") || !matches(r.Resources, "leases") {
			continue
		}
		for _, v := range r.Verbs {
			if !granted[v] || v == "delete" || v == "deletecollection" || v == "patch" || v == "list" || v == "watch" {
				t.Errorf("ClusterRole rule %s allows %q on every Lease of the cluster; collectors are granted only %v", ruleString(r), v, keys(granted))
			}
		}
	}
	// Positive control: what k8s_leader_elector collectors are granted is held.
	for _, v := range []string{"get", "create", "update"} {
		if !granted[v] {
			t.Errorf("k8s_leader_elector is not granted %q on Leases; client-go's Lease lock needs it", v)
		}
		if !covered(cr.Rules, access{"coordination.k8s.io", "leases", v, ""}) {
			t.Errorf("ClusterRole does not allow %q on Leases, which the operator grants to k8s_leader_elector collectors", v)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestShippedRoleCoversTargetAllocatorRules: every rule the operator can grant a target
// allocator's generated ServiceAccount (manifestutils.TargetAllocatorRBAC, widest config: every
// kubernetes_sd role cluster-wide with node metadata, every Prometheus Operator kind in namespaces
// chosen by label) is covered by the shipped ClusterRole. Secrets (granted only with the mTLS gate,
// for which users bind Secret rights themselves) are not part of it.
func TestShippedRoleCoversTargetAllocatorRules(t *testing.T) {
	cr, _ := shipped(t)
	var sds []any
	for _, role := range []string{"node", "pod", "service", "endpoints", "endpointslice", "ingress"} {
		sds = append(sds, map[string]any{"role": role, "attach_metadata": map[string]any{"node": true}})
	}
	byLabel := &metav1.LabelSelector{MatchLabels: map[string]string{"monitoring": "on"}}
	ta := v1alpha1.TargetAllocator{Spec: v1alpha1.TargetAllocatorSpec{
		ScrapeConfigs: []v1beta1.AnyConfig{{Object: map[string]any{"job_name": "all", "kubernetes_sd_configs": sds}}},
		PrometheusCR: v1beta1.TargetAllocatorPrometheusCR{Enabled: true,
			ServiceMonitorSelector: byLabel, ServiceMonitorNamespaceSelector: byLabel,
			PodMonitorSelector: byLabel, PodMonitorNamespaceSelector: byLabel,
			ProbeSelector: byLabel, ProbeNamespaceSelector: byLabel,
			ScrapeConfigSelector: byLabel, ScrapeConfigNamespaceSelector: byLabel},
	}}
	ta.Name, ta.Namespace = "ta", "obs"
	p, err := manifestutils.TargetAllocatorRBAC(ta, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cluster) == 0 {
		t.Fatal("the widest target allocator config produced no cluster rules; the test case is wrong")
	}
	for _, r := range append(p.Cluster, p.Namespaced...) {
		for _, m := range missing(cr.Rules, r) {
			t.Errorf("config/rbac/role.yaml does not cover %s, which the operator grants target allocators: add it to the markers in internal/operator/rbac.go and run `make generate`", ruleString(m))
		}
	}
}
