package promcr

import (
	"fmt"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What ServiceMonitor and PodMonitor translation share: one job per endpoint, the same start of
// each job (honour flags, kubernetes_sd, scrape parameters) and the same relabelling steps.

// perEndpoint translates each of the n endpoints of a kind resource with one, each with its own
// translator whose errors name field[i]; an error also names the resource.
func perEndpoint(kind string, m *metav1.ObjectMeta, field string, n int, store Store, opts Options,
	one func(t *translator, i int) (section, error)) ([]section, error) {
	out := make([]section, 0, n)
	for i := range n {
		t := &translator{ns: m.Namespace, store: store, opts: opts, path: fmt.Sprintf("%s[%d]", field, i)}
		sc, err := one(t, i)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", kind, m.Namespace, m.Name, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// honor writes honor_labels (only when set), honor_timestamps and track_timestamps_staleness.
func honor(sc *section, labels bool, timestamps, staleness *bool) {
	if labels {
		put(sc, "honor_labels", true)
	}
	put(sc, "honor_timestamps", timestamps)
	put(sc, "track_timestamps_staleness", staleness)
}

// kubernetesSD writes the kubernetes_sd_configs of role in the namespaces sel names (own: the
// resource's namespace), with node metadata when am asks for it.
func kubernetesSD(sc *section, role string, sel monv1.NamespaceSelector, own string, am *monv1.AttachMetadata) {
	sd := section{{Key: "role", Value: role}}
	put(&sd, "namespaces", namespaces(sel, own))
	if am != nil && am.Node != nil {
		put(&sd, "attach_metadata", section{{Key: "node", Value: *am.Node}})
	}
	put(sc, "kubernetes_sd_configs", []section{sd})
}

// scrapeParams writes scrape_interval, scrape_timeout, metrics_path, params, scheme and proxy.
func scrapeParams(sc *section, interval, timeout monv1.Duration, path string, params map[string][]string,
	scheme *monv1.Scheme, p monv1.ProxyConfig) {
	put(sc, "scrape_interval", string(interval))
	put(sc, "scrape_timeout", string(timeout))
	put(sc, "metrics_path", path)
	put(sc, "params", params)
	if scheme != nil {
		put(sc, "scheme", scheme.String())
	}
	proxy(sc, p)
}

// selectionRules are the first relabel rules of a monitor: the job label kept aside, then the
// rules of sel on the labels of the object whose discovery meta labels start with meta (such as
// __meta_kubernetes_pod_).
func selectionRules(sel metav1.LabelSelector, meta string) ([]section, error) {
	rules := []section{rule("source_labels", []string{"job"}, "target_label", "__tmp_prometheus_job_name")}
	keep, err := selectorRules(sel, meta+"label_", meta+"labelpresent_")
	if err != nil {
		return nil, err
	}
	return append(rules, keep...), nil
}

// runningOnly appends the rule dropping finished pods unless filterRunning is false.
func runningOnly(rules []section, filterRunning *bool) []section {
	if filterRunning == nil || *filterRunning {
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_phase"}, "regex", "(Failed|Succeeded)", "action", "drop"))
	}
	return rules
}

// targetLabels appends a rule per label copying the object's label (meta prefix such as
// __meta_kubernetes_pod_label_) to the target.
func targetLabels(rules []section, meta string, names []string) []section {
	for _, l := range names {
		rules = append(rules, rule("source_labels", []string{meta + sanitize(l)}, "target_label", sanitize(l), "regex", "(.+)", "replacement", "${1}"))
	}
	return rules
}

// relabelling writes relabel_configs (rules, then the user's relabelings) and
// metric_relabel_configs.
func relabelling(sc *section, rules []section, user, metric []monv1.RelabelConfig) {
	put(sc, "relabel_configs", append(rules, relabels(user)...))
	put(sc, "metric_relabel_configs", relabels(metric))
}
