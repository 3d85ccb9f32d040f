package manifestutils

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// ComponentTargetAllocator is the app.kubernetes.io/component value of target allocator objects.
const ComponentTargetAllocator = "opentelemetry-targetallocator"

// TargetAllocatorScrapeConfigs are a target allocator's scrape configs: spec.scrapeConfigs, then
// those of the prometheus receiver of collector (nil for a standalone allocator).
func TargetAllocatorScrapeConfigs(ta v1alpha1.TargetAllocator, collector *v1beta1.OpenTelemetryCollector) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(ta.Spec.ScrapeConfigs))
	for _, sc := range ta.Spec.ScrapeConfigs {
		if sc.Object != nil {
			out = append(out, sc.Object)
		}
	}
	if collector == nil {
		return out, nil
	}
	raw := map[string]any{"receivers": collector.Spec.Config.Receivers.Object}
	fromCollector, err := collectorconfig.PrometheusScrapeConfigs(raw, field.NewPath("spec", "config"))
	if err != nil {
		return nil, fmt.Errorf("collector %s: %w", collector.Name, err)
	}
	return append(out, fromCollector...), nil
}

// TargetAllocatorClusterRBACName returns "<name>-<namespace>-targetallocator", the ClusterRole and
// ClusterRoleBinding of the target allocator name in namespace, truncated to 63 characters like the
// collector's cluster RBAC names (naming.Truncate shortens the name, then the namespace).
func TargetAllocatorClusterRBACName(name, namespace string) string {
	return naming.DNSName(naming.Truncate("%s-%s-targetallocator", 63, name, namespace))
}

// Permissions are the API rights the target allocator's generated ServiceAccount needs for its
// configuration (upstream leaves them to users). The allocator reads, never writes.
type Permissions struct {
	// Namespaced are the rules that hold in the allocator's own namespace: a Role and RoleBinding
	// the TargetAllocator owns.
	Namespaced []rbacv1.PolicyRule
	// Cluster are the rules that must hold in every namespace (discovery beyond the allocator's
	// namespace, nodes, namespaces): a ClusterRole and ClusterRoleBinding; nil when the allocator
	// reads its own namespace only.
	Cluster []rbacv1.PolicyRule
}

var readVerbs = []string{"get", "list", "watch"}

// Resources the allocator reads, by group.
const (
	coreGroup      = ""
	discoveryGroup = "discovery.k8s.io"
	ingressGroup   = "networking.k8s.io"
	monitoringAPI  = "monitoring.coreos.com"
)

// TargetAllocatorRBAC returns what the ServiceAccount of ta needs, or empty Permissions when
// spec.serviceAccount names the user's own (then, as upstream, the user owns its RBAC):
//   - pods in its namespace, to find the collectors it shares targets among;
//   - for each kubernetes_sd_configs role of the scrape configs (ta's and the collector's
//     prometheus receiver's) the resources Prometheus' discovery watches for it (node: nodes;
//     pod: pods; service: services; endpoints and endpointslice: those, services and pods;
//     ingress: ingresses; attach_metadata.node adds nodes), in its namespace when the SD config
//     is limited to it (namespaces.own_namespace, or names listing only it), else cluster-wide.
//     An SD config with api_server or kubeconfig_file reads another cluster and needs nothing here;
//   - with spec.prometheusCR.enabled, for each kind whose selector is set (a null selector
//     selects nothing and is not watched) the kind itself and the resources its targets are
//     discovered from, plus get on config maps (TLS material): in the allocator's namespace when
//     the kind's namespace selector is null (or allow_namespaces is only that namespace), else
//     cluster-wide, where ScrapeConfigs also get nodes; a non-empty namespace selector adds
//     namespaces. Secrets of monitors are read with get, in the allocator's namespace only, and
//     only when mtls (the operator.targetallocator.mtls gate) is on: only then does the operator hold Secret rights to grant.
func TargetAllocatorRBAC(ta v1alpha1.TargetAllocator, collector *v1beta1.OpenTelemetryCollector, mtls bool) (Permissions, error) {
	if ta.Spec.ServiceAccount != "" {
		return Permissions{}, nil
	}
	scrape, err := TargetAllocatorScrapeConfigs(ta, collector)
	if err != nil {
		return Permissions{}, err
	}
	own, cluster := ruleSet{}, ruleSet{}
	own.add(coreGroup, readVerbs, "pods")
	for _, sc := range scrape {
		for _, sd := range asMaps(sc["kubernetes_sd_configs"]) {
			addKubernetesSD(sd, ta.Namespace, own, cluster)
		}
	}
	if cr := ta.Spec.PrometheusCR; cr.Enabled {
		addPrometheusCR(cr, ta.Namespace, mtls, own, cluster)
	}
	own.subtract(cluster)
	return Permissions{Namespaced: own.rules(), Cluster: cluster.rules()}, nil
}

// addKubernetesSD adds what one kubernetes_sd_configs entry reads.
func addKubernetesSD(sd map[string]any, namespace string, own, cluster ruleSet) {
	if s, _ := sd["api_server"].(string); s != "" {
		return
	}
	if s, _ := sd["kubeconfig_file"].(string); s != "" {
		return
	}
	scope := cluster
	if ns, _ := sd["namespaces"].(map[string]any); ns != nil && ownNamespaceOnly(ns, namespace) {
		scope = own
	}
	role, _ := sd["role"].(string)
	switch strings.ToLower(role) {
	case "node":
		cluster.add(coreGroup, readVerbs, "nodes")
	case "pod":
		scope.add(coreGroup, readVerbs, "pods")
	case "service":
		scope.add(coreGroup, readVerbs, "services")
	case "endpoints":
		scope.add(coreGroup, readVerbs, "endpoints", "services", "pods")
	case "endpointslice":
		scope.add(discoveryGroup, readVerbs, "endpointslices")
		scope.add(coreGroup, readVerbs, "services", "pods")
	case "ingress":
		scope.add(ingressGroup, readVerbs, "ingresses")
	}
	if am, _ := sd["attach_metadata"].(map[string]any); am != nil && am["node"] == true {
		cluster.add(coreGroup, readVerbs, "nodes")
	}
}

// ownNamespaceOnly reports whether a kubernetes SD namespaces section limits discovery to the
// allocator's namespace.
func ownNamespaceOnly(ns map[string]any, namespace string) bool {
	names, _ := ns["names"].([]any)
	for _, n := range names {
		if s, _ := n.(string); s != namespace {
			return false
		}
	}
	return len(names) > 0 || ns["own_namespace"] == true
}

// crKinds are the Prometheus Operator kinds, with what the targets they describe are discovered
// from.
var crKinds = []struct {
	resource string
	discover map[string][]string // group -> resources
}{
	{"servicemonitors", map[string][]string{coreGroup: {"endpoints", "services", "pods"}, discoveryGroup: {"endpointslices"}}},
	{"podmonitors", map[string][]string{coreGroup: {"pods"}}},
	{"probes", map[string][]string{ingressGroup: {"ingresses"}}},
	{"scrapeconfigs", map[string][]string{coreGroup: {"endpoints", "services", "pods"}, discoveryGroup: {"endpointslices"}, ingressGroup: {"ingresses"}}},
}

func addPrometheusCR(cr v1beta1.TargetAllocatorPrometheusCR, namespace string, mtls bool, own, cluster ruleSet) {
	selectors := map[string][2]*metav1.LabelSelector{
		"servicemonitors": {cr.ServiceMonitorSelector, cr.ServiceMonitorNamespaceSelector},
		"podmonitors":     {cr.PodMonitorSelector, cr.PodMonitorNamespaceSelector},
		"probes":          {cr.ProbeSelector, cr.ProbeNamespaceSelector},
		"scrapeconfigs":   {cr.ScrapeConfigSelector, cr.ScrapeConfigNamespaceSelector},
	}
	onlyOwn := len(cr.AllowNamespaces) == 1 && cr.AllowNamespaces[0] == namespace
	for _, k := range crKinds {
		sel := selectors[k.resource]
		if sel[0] == nil {
			continue
		}
		scope := cluster
		if sel[1] == nil || onlyOwn {
			scope = own
		}
		if sel[1] != nil && (len(sel[1].MatchLabels) > 0 || len(sel[1].MatchExpressions) > 0) {
			cluster.add(coreGroup, readVerbs, "namespaces")
		}
		scope.add(monitoringAPI, readVerbs, k.resource)
		for group, resources := range k.discover {
			scope.add(group, readVerbs, resources...)
		}
		scope.add(coreGroup, []string{"get"}, "configmaps")
		if k.resource == "scrapeconfigs" && !onlyOwn && sel[1] != nil {
			cluster.add(coreGroup, readVerbs, "nodes")
		}
	}
	if mtls {
		own.add(coreGroup, []string{"get"}, "secrets")
	}
}

// ruleSet collects rules as group -> resource -> verbs.
type ruleSet map[string]map[string][]string

func (r ruleSet) add(group string, verbs []string, resources ...string) {
	if r[group] == nil {
		r[group] = map[string][]string{}
	}
	for _, res := range resources {
		have := r[group][res]
		for _, v := range verbs {
			if !slices.Contains(have, v) {
				have = append(have, v)
			}
		}
		r[group][res] = have
	}
}

// subtract drops from r the verbs other grants already (cluster-wide rules hold in every
// namespace).
func (r ruleSet) subtract(other ruleSet) {
	for group, resources := range r {
		for res, verbs := range resources {
			left := slices.DeleteFunc(slices.Clone(verbs), func(v string) bool { return slices.Contains(other[group][res], v) })
			if len(left) == 0 {
				delete(resources, res)
			} else {
				resources[res] = left
			}
		}
		if len(resources) == 0 {
			delete(r, group)
		}
	}
}

// rules returns one rule per group and verb set, resources sorted; nil when empty.
func (r ruleSet) rules() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, group := range slices.Sorted(maps.Keys(r)) {
		byVerbs := map[string][]string{}
		for res, verbs := range r[group] {
			v := slices.Clone(verbs)
			slices.SortFunc(v, verbOrder)
			key := strings.Join(v, ",")
			byVerbs[key] = append(byVerbs[key], res)
		}
		for _, key := range slices.Sorted(maps.Keys(byVerbs)) {
			res := byVerbs[key]
			slices.Sort(res)
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: res, Verbs: strings.Split(key, ",")})
		}
	}
	return out
}

// verbOrder sorts verbs as get, list, watch.
func verbOrder(a, b string) int { return slices.Index(readVerbs, a) - slices.Index(readVerbs, b) }

func asMaps(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
