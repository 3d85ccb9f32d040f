package promcr

import (
	"fmt"
	"strconv"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodMonitor returns one scrape configuration per podMetricsEndpoint of pm, named
// podMonitor/<namespace>/<name>/<index>.
func PodMonitor(pm *monv1.PodMonitor, store Store, opts Options) ([]section, error) {
	out := make([]section, 0, len(pm.Spec.PodMetricsEndpoints))
	for i := range pm.Spec.PodMetricsEndpoints {
		t := &translator{ns: pm.Namespace, store: store, opts: opts, path: fmt.Sprintf("spec.podMetricsEndpoints[%d]", i)}
		sc, err := t.podMonitorEndpoint(pm, i)
		if err != nil {
			return nil, fmt.Errorf("PodMonitor %s/%s: %w", pm.Namespace, pm.Name, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

//nolint:staticcheck // targetPort is deprecated but still served; honoured as upstream does
func (t *translator) podMonitorEndpoint(pm *monv1.PodMonitor, i int) (section, error) {
	ep := pm.Spec.PodMetricsEndpoints[i]
	sc := section{{Key: "job_name", Value: fmt.Sprintf("podMonitor/%s/%s/%d", pm.Namespace, pm.Name, i)}}
	if ep.HonorLabels {
		put(&sc, "honor_labels", true)
	}
	put(&sc, "honor_timestamps", ep.HonorTimestamps)
	put(&sc, "track_timestamps_staleness", ep.TrackTimestampsStaleness)
	sd := section{{Key: "role", Value: "pod"}}
	put(&sd, "namespaces", namespaces(pm.Spec.NamespaceSelector, pm.Namespace))
	if am := pm.Spec.AttachMetadata; am != nil && am.Node != nil {
		put(&sd, "attach_metadata", section{{Key: "node", Value: *am.Node}})
	}
	put(&sc, "kubernetes_sd_configs", []section{sd})
	put(&sc, "scrape_interval", string(ep.Interval))
	put(&sc, "scrape_timeout", string(ep.ScrapeTimeout))
	put(&sc, "metrics_path", ep.Path)
	put(&sc, "params", ep.Params)
	if ep.Scheme != nil {
		put(&sc, "scheme", ep.Scheme.String())
	}
	proxy(&sc, ep.ProxyConfig)
	if err := t.auth(&sc, ep.HTTPConfigWithoutTLS, nil); err != nil {
		return nil, err
	}
	if err := t.tls(&sc, ep.TLSConfig, nil); err != nil {
		return nil, err
	}

	rules := []section{rule("source_labels", []string{"job"}, "target_label", "__tmp_prometheus_job_name")}
	sel, err := selectorRules(pm.Spec.Selector, "__meta_kubernetes_pod_label_", "__meta_kubernetes_pod_labelpresent_")
	if err != nil {
		return nil, err
	}
	rules = append(rules, sel...)
	endpoint := ""
	switch {
	case ep.Port != nil && *ep.Port != "":
		endpoint = *ep.Port
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_container_port_name"}, "regex", endpoint, "action", "keep"))
	case ep.PortNumber != nil:
		endpoint = strconv.Itoa(int(*ep.PortNumber))
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_container_port_number"}, "regex", endpoint, "action", "keep"))
	case ep.TargetPort != nil && ep.TargetPort.Type == intstr.Int:
		endpoint = ep.TargetPort.String()
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_container_port_number"}, "regex", endpoint, "action", "keep"))
	case ep.TargetPort != nil:
		endpoint = ep.TargetPort.String()
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_container_port_name"}, "regex", endpoint, "action", "keep"))
	}
	if ep.FilterRunning == nil || *ep.FilterRunning {
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_phase"}, "regex", "(Failed|Succeeded)", "action", "drop"))
	}
	rules = append(rules,
		rule("source_labels", []string{"__meta_kubernetes_namespace"}, "target_label", "namespace"),
		rule("source_labels", []string{"__meta_kubernetes_pod_container_name"}, "target_label", "container"),
		rule("source_labels", []string{"__meta_kubernetes_pod_name"}, "target_label", "pod"),
	)
	for _, l := range pm.Spec.PodTargetLabels {
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_label_" + sanitize(l)}, "target_label", sanitize(l), "regex", "(.+)", "replacement", "${1}"))
	}
	rules = append(rules, rule("target_label", "job", "replacement", pm.Namespace+"/"+pm.Name))
	if pm.Spec.JobLabel != "" {
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_label_" + sanitize(pm.Spec.JobLabel)}, "target_label", "job", "regex", "(.+)", "replacement", "${1}"))
	}
	if endpoint != "" {
		rules = append(rules, rule("target_label", "endpoint", "replacement", endpoint))
	}
	rules = append(rules, relabels(ep.RelabelConfigs)...)
	put(&sc, "relabel_configs", rules)
	put(&sc, "metric_relabel_configs", relabels(ep.MetricRelabelConfigs))
	s := pm.Spec
	limits(&sc, s.SampleLimit, s.TargetLimit, s.LabelLimit, s.LabelNameLengthLimit, s.LabelValueLengthLimit, s.KeepDroppedTargets)
	protocols(&sc, s.ScrapeProtocols, s.FallbackScrapeProtocol)
	return sc, nil
}
