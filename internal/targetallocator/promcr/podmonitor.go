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
	return perEndpoint("PodMonitor", &pm.ObjectMeta, "spec.podMetricsEndpoints", len(pm.Spec.PodMetricsEndpoints), store, opts,
		func(t *translator, i int) (section, error) { return t.podMonitorEndpoint(pm, i) })
}

//nolint:staticcheck // targetPort is deprecated but still served; honoured as upstream does
func (t *translator) podMonitorEndpoint(pm *monv1.PodMonitor, i int) (section, error) {
	ep := pm.Spec.PodMetricsEndpoints[i]
	class, err := t.scrapeClass(pm.Spec.ScrapeClassName)
	if err != nil {
		return nil, err
	}
	sc := section{{Key: "job_name", Value: fmt.Sprintf("podMonitor/%s/%s/%d", pm.Namespace, pm.Name, i)}}
	honor(&sc, ep.HonorLabels, ep.HonorTimestamps, ep.TrackTimestampsStaleness)
	kubernetesSD(&sc, "pod", pm.Spec.NamespaceSelector, pm.Namespace, classAttachMetadata(class, pm.Spec.AttachMetadata))
	scrapeParams(&sc, ep.Interval, ep.ScrapeTimeout, ep.Path, ep.Params, ep.Scheme, ep.ProxyConfig)
	if err := t.auth(&sc, ep.HTTPConfigWithoutTLS); err != nil {
		return nil, err
	}
	if err := t.tls(&sc, ep.TLSConfig, nil); err != nil {
		return nil, err
	}
	if err := t.applyClass(&sc, class); err != nil {
		return nil, err
	}

	rules, err := selectionRules(pm.Spec.Selector, "__meta_kubernetes_pod_")
	if err != nil {
		return nil, err
	}
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
	rules = runningOnly(rules, ep.FilterRunning)
	rules = append(rules,
		rule("source_labels", []string{"__meta_kubernetes_namespace"}, "target_label", "namespace"),
		rule("source_labels", []string{"__meta_kubernetes_pod_container_name"}, "target_label", "container"),
		rule("source_labels", []string{"__meta_kubernetes_pod_name"}, "target_label", "pod"),
	)
	rules = targetLabels(rules, "__meta_kubernetes_pod_label_", pm.Spec.PodTargetLabels)
	rules = append(rules, rule("target_label", "job", "replacement", pm.Namespace+"/"+pm.Name))
	if pm.Spec.JobLabel != "" {
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_label_" + sanitize(pm.Spec.JobLabel)}, "target_label", "job", "regex", "(.+)", "replacement", "${1}"))
	}
	if endpoint != "" {
		rules = append(rules, rule("target_label", "endpoint", "replacement", endpoint))
	}
	relabelling(&sc, append(rules, classRules(class)...), ep.RelabelConfigs, classMetricRelabels(class, ep.MetricRelabelConfigs))
	s := pm.Spec
	limits(&sc, s.SampleLimit, s.TargetLimit, s.LabelLimit, s.LabelNameLengthLimit, s.LabelValueLengthLimit, s.KeepDroppedTargets)
	protocols(&sc, s.ScrapeProtocols, classFallback(class, s.FallbackScrapeProtocol))
	histograms(&sc, s.NativeHistogramConfig, s.BodySizeLimit)
	return sc, nil
}
