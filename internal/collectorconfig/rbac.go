package collectorconfig

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

var (
	readVerbs    = []string{"get", "watch", "list"}
	getListWatch = []string{"get", "list", "watch"}
)

// RBACRules returns the cluster RBAC rules the used components need, in a stable order: by kind
// (receivers, processors, exporters, connectors, extensions), then by component id. Rules that are
// exactly equal to an earlier one are left out.
func RBACRules(c *Config) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	seen := map[string]bool{}
	for _, kind := range Kinds {
		for _, comp := range c.UsedComponents(kind) {
			s := specFor(kind, comp.Type)
			if s.rbac == nil {
				continue
			}
			for _, r := range s.rbac(comp.configMap()) {
				key := ruleKey(r)
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, r)
			}
		}
	}
	return out
}

func ruleKey(r rbacv1.PolicyRule) string {
	return strings.Join(r.APIGroups, ",") + "|" + strings.Join(r.Resources, ",") + "|" +
		strings.Join(r.Verbs, ",") + "|" + strings.Join(r.ResourceNames, ",") + "|" + strings.Join(r.NonResourceURLs, ",")
}

// EnvVars returns the environment variables the used components need in the collector container,
// sorted by name (kubeletstats needs K8S_NODE_NAME). Variables with a name seen before are left out.
func EnvVars(c *Config) []corev1.EnvVar {
	var out []corev1.EnvVar
	seen := map[string]bool{}
	for _, comp := range c.UsedComponents(KindReceiver) {
		s := specFor(KindReceiver, comp.Type)
		if s.env == nil {
			continue
		}
		for _, e := range s.env(comp.configMap()) {
			if !seen[e.Name] {
				seen[e.Name] = true
				out = append(out, e)
			}
		}
	}
	sortEnv(out)
	return out
}

func sortEnv(env []corev1.EnvVar) {
	for i := 1; i < len(env); i++ {
		for j := i; j > 0 && env[j].Name < env[j-1].Name; j-- {
			env[j], env[j-1] = env[j-1], env[j]
		}
	}
}

// k8sAttributesRules: pods and namespaces always; replicasets when deployment or service names are
// extracted (or nothing is configured, which extracts them by default); nodes for k8s.node.*;
// jobs and cronjobs for cronjob metadata and job/cronjob labels or annotations.
func k8sAttributesRules(cfg map[string]any) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: readVerbs}}
	replicasets := rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: readVerbs}
	jobs := rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: readVerbs}
	cronjobs := rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: readVerbs}
	extract := getMap(cfg, "extract")
	metadata := getStrings(extract, "metadata")
	addedRS, addedJobs, addedCron, addedNodes := len(metadata) == 0, false, false, false
	if addedRS {
		rules = append(rules, replicasets)
	}
	for _, m := range metadata {
		switch {
		case (m == "k8s.deployment.uid" || m == "k8s.deployment.name" || m == "service.name") && !addedRS:
			rules = append(rules, replicasets)
			addedRS = true
		case strings.Contains(m, "k8s.node") && !addedNodes:
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: readVerbs})
			addedNodes = true
		case m == "k8s.cronjob.uid" && !addedJobs:
			rules = append(rules, jobs)
			addedJobs = true
		}
	}
	for _, section := range []string{"labels", "annotations"} {
		l, _ := asList(extract[section])
		for _, e := range l {
			from := getString(asMapOrNil(e), "from")
			if (from == "job" || from == "cronjob") && !addedJobs {
				rules = append(rules, jobs)
				addedJobs = true
			}
			if from == "cronjob" && !addedCron {
				rules = append(rules, cronjobs)
				addedCron = true
			}
		}
	}
	return rules
}

func asMapOrNil(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// resourceDetectionRules: per detector; k8snode reads nodes, openshift reads infrastructures.
func resourceDetectionRules(cfg map[string]any) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, d := range getStrings(cfg, "detectors") {
		switch d {
		case "k8snode":
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"},
				Verbs: []string{"get", "list"}})
		case "openshift":
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"config.openshift.io"},
				Resources: []string{"infrastructures", "infrastructures/status"}, Verbs: readVerbs})
		}
	}
	return rules
}

// clusterReadRules are the read rules k8s_cluster and k8s_events need.
func clusterReadRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"events", "namespaces", "namespaces/status", "nodes",
			"nodes/spec", "pods", "pods/status", "replicationcontrollers", "replicationcontrollers/status",
			"resourcequotas", "services"}, Verbs: getListWatch},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "replicasets", "statefulsets"},
			Verbs: getListWatch},
		{APIGroups: []string{"extensions"}, Resources: []string{"daemonsets", "deployments", "replicasets"},
			Verbs: getListWatch},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: getListWatch},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: getListWatch},
	}
}

// k8sClusterRules: cluster-wide reads, plus cluster resource quotas on OpenShift.
func k8sClusterRules(cfg map[string]any) []rbacv1.PolicyRule {
	rules := clusterReadRules()
	if getString(cfg, "distribution") == "openshift" {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"quota.openshift.io"},
			Resources: []string{"clusterresourcequotas"}, Verbs: getListWatch})
	}
	return rules
}

// k8sEventsRules: the same cluster-wide reads as k8s_cluster.
func k8sEventsRules(map[string]any) []rbacv1.PolicyRule {
	return clusterReadRules()
}

// k8sObjectsRules: one rule per entry of objects: list always, get in pull mode (except events),
// watch in watch mode.
func k8sObjectsRules(cfg map[string]any) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	l, _ := asList(cfg["objects"])
	for _, e := range l {
		obj := asMapOrNil(e)
		name, mode := getString(obj, "name"), getString(obj, "mode")
		verbs := []string{"list"}
		switch {
		case mode == "pull" && name != "events" && name != "events.k8s.io":
			verbs = append(verbs, "get")
		case mode == "watch":
			verbs = append(verbs, "watch")
		}
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{getString(obj, "group")},
			Resources: []string{name}, Verbs: verbs})
	}
	return rules
}

// kubeletStatsRules: nodes/stats always; nodes/proxy for extra metadata labels or utilization metrics.
func kubeletStatsRules(cfg map[string]any) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/stats"}, Verbs: []string{"get"}}}
	proxy := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}}
	if len(getStrings(cfg, "extra_metadata_labels")) > 0 {
		return append(rules, proxy)
	}
	metrics := getMap(cfg, "metrics")
	for _, m := range []string{
		"k8s.container.cpu_limit_utilization", "k8s.container.cpu_request_utilization",
		"k8s.container.memory_limit_utilization", "k8s.container.memory_request_utilization",
		"k8s.pod.cpu_limit_utilization", "k8s.pod.cpu_request_utilization",
		"k8s.pod.memory_limit_utilization", "k8s.pod.memory_request_utilization",
	} {
		if getBool(getMap(metrics, m), "enabled") {
			return append(rules, proxy)
		}
	}
	return rules
}

// kubeletStatsEnv: the node name, which the receiver needs to find its kubelet.
func kubeletStatsEnv(map[string]any) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: "K8S_NODE_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
}

// k8sObserverRules: list and watch what the observer is asked to observe.
func k8sObserverRules(cfg map[string]any) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, o := range []struct{ key, resource string }{
		{"observe_pods", "pods"}, {"observe_services", "services"}, {"observe_nodes", "nodes"},
	} {
		if getBool(cfg, o.key) {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{o.resource},
				Verbs: []string{"list", "watch"}})
		}
	}
	return rules
}

// RBACComponentTypes returns, per kind, the component types (without aliases) whose use makes the
// operator put rules into a collector's ClusterRole, sorted. The operator must itself hold every
// rule these components can produce; config/rbac's tests check role.yaml against it.
func RBACComponentTypes() map[Kind][]string {
	out := map[Kind][]string{}
	for kind, specs := range map[Kind]map[string]spec{
		KindReceiver: receiverSpecs, KindProcessor: processorSpecs,
		KindExporter: exporterSpecs, KindExtension: extensionSpecs,
	} {
		for typ, s := range specs {
			if s.rbac != nil {
				out[kind] = append(out[kind], typ)
			}
		}
		sort.Strings(out[kind])
	}
	return out
}
