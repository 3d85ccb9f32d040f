package promcr

import (
	"fmt"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ServiceMonitor returns one scrape configuration per endpoint of sm, named
// serviceMonitor/<namespace>/<name>/<index> as upstream names them.
func ServiceMonitor(sm *monv1.ServiceMonitor, store Store, opts Options) ([]section, error) {
	return perEndpoint("ServiceMonitor", &sm.ObjectMeta, "spec.endpoints", len(sm.Spec.Endpoints), store, opts,
		func(t *translator, i int) (section, error) { return t.serviceMonitorEndpoint(sm, i) })
}

//nolint:staticcheck // bearerTokenFile and bearerTokenSecret are deprecated but still served; honoured as upstream does
func (t *translator) serviceMonitorEndpoint(sm *monv1.ServiceMonitor, i int) (section, error) {
	ep := sm.Spec.Endpoints[i]
	// EndpointSlices unless the ServiceMonitor asks for Endpoints, as upstream's allocator
	// discovers (Endpoints stop at 1,000 addresses, and users' rules name the slice labels).
	role, meta := "endpointslice", "__meta_kubernetes_endpointslice_"
	if r := sm.Spec.ServiceDiscoveryRole; r != nil && *r == monv1.EndpointsRole {
		role, meta = "endpoints", "__meta_kubernetes_endpoint_"
	}
	class, err := t.scrapeClass(sm.Spec.ScrapeClassName)
	if err != nil {
		return nil, err
	}
	sc := section{{Key: "job_name", Value: fmt.Sprintf("serviceMonitor/%s/%s/%d", sm.Namespace, sm.Name, i)}}
	honor(&sc, ep.HonorLabels, ep.HonorTimestamps, ep.TrackTimestampsStaleness)
	kubernetesSD(&sc, role, sm.Spec.NamespaceSelector, sm.Namespace, classAttachMetadata(class, sm.Spec.AttachMetadata))
	scrapeParams(&sc, ep.Interval, ep.ScrapeTimeout, ep.Path, ep.Params, ep.Scheme, ep.ProxyConfig)
	if ep.BearerTokenFile != "" {
		if t.opts.DenyFSAccess {
			return nil, t.errf("bearerTokenFile", "refused: deny_fs_access_through_sms is set")
		}
		if ep.Authorization != nil || ep.BasicAuth != nil || ep.BearerTokenSecret != nil {
			return nil, t.errf("bearerTokenFile", "set together with another authentication; choose one")
		}
		put(&sc, "authorization", section{{Key: "type", Value: "Bearer"}, {Key: "credentials_file", Value: ep.BearerTokenFile}})
	}
	if err := t.auth(&sc, ep.HTTPConfigWithoutTLS); err != nil {
		return nil, err
	}
	var safe *monv1.SafeTLSConfig
	var files *monv1.TLSFilesConfig
	if ep.TLSConfig != nil {
		safe, files = &ep.TLSConfig.SafeTLSConfig, &ep.TLSConfig.TLSFilesConfig
	}
	if err := t.tls(&sc, safe, files); err != nil {
		return nil, err
	}
	if err := t.applyClass(&sc, class); err != nil {
		return nil, err
	}

	rules, err := serviceMonitorRules(sm, ep, meta)
	if err != nil {
		return nil, err
	}
	relabelling(&sc, append(rules, classRules(class)...), ep.RelabelConfigs, classMetricRelabels(class, ep.MetricRelabelConfigs))
	s := sm.Spec
	limits(&sc, s.SampleLimit, s.TargetLimit, s.LabelLimit, s.LabelNameLengthLimit, s.LabelValueLengthLimit, s.KeepDroppedTargets)
	protocols(&sc, s.ScrapeProtocols, classFallback(class, s.FallbackScrapeProtocol))
	histograms(&sc, s.NativeHistogramConfig, s.BodySizeLimit)
	return sc, nil
}

// serviceMonitorRules are the relabel rules the Prometheus Operator generates for an endpoint:
// service selection, port, pod phase, target labels, job and endpoint labels.
//
//nolint:staticcheck // targetPort is deprecated but still served
func serviceMonitorRules(sm *monv1.ServiceMonitor, ep monv1.Endpoint, meta string) ([]section, error) {
	rules, err := selectionRules(sm.Spec.Selector, "__meta_kubernetes_service_")
	if err != nil {
		return nil, err
	}
	switch {
	case ep.Port != "":
		rules = append(rules, rule("source_labels", []string{meta + "port_name"}, "regex", ep.Port, "action", "keep"))
	case ep.TargetPort != nil && ep.TargetPort.Type == intstr.Int:
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_container_port_number"}, "regex", ep.TargetPort.String(), "action", "keep"))
	case ep.TargetPort != nil:
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_pod_container_port_name"}, "regex", ep.TargetPort.String(), "action", "keep"))
	}
	rules = runningOnly(rules, ep.FilterRunning)
	kind, name := meta+"address_target_kind", meta+"address_target_name"
	rules = append(rules,
		rule("source_labels", []string{kind, name}, "separator", ";", "regex", "Node;(.*)", "replacement", "${1}", "target_label", "node"),
		rule("source_labels", []string{kind, name}, "separator", ";", "regex", "Pod;(.*)", "replacement", "${1}", "target_label", "pod"),
		rule("source_labels", []string{"__meta_kubernetes_namespace"}, "target_label", "namespace"),
		rule("source_labels", []string{"__meta_kubernetes_service_name"}, "target_label", "service"),
		rule("source_labels", []string{"__meta_kubernetes_pod_name"}, "target_label", "pod"),
		rule("source_labels", []string{"__meta_kubernetes_pod_container_name"}, "target_label", "container"),
	)
	rules = targetLabels(rules, "__meta_kubernetes_service_label_", sm.Spec.TargetLabels)
	rules = targetLabels(rules, "__meta_kubernetes_pod_label_", sm.Spec.PodTargetLabels)
	rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_service_name"}, "target_label", "job", "replacement", "${1}"))
	if sm.Spec.JobLabel != "" {
		rules = append(rules, rule("source_labels", []string{"__meta_kubernetes_service_label_" + sanitize(sm.Spec.JobLabel)}, "target_label", "job", "regex", "(.+)", "replacement", "${1}"))
	}
	switch {
	case ep.Port != "":
		rules = append(rules, rule("target_label", "endpoint", "replacement", ep.Port))
	case ep.TargetPort != nil:
		rules = append(rules, rule("target_label", "endpoint", "replacement", ep.TargetPort.String()))
	}
	return rules, nil
}

// namespaces renders the kubernetes_sd namespaces section of a namespaceSelector: any means
// every namespace (no section), matchNames those, and nothing the resource's own namespace.
func namespaces(sel monv1.NamespaceSelector, own string) section {
	if sel.Any {
		return nil
	}
	names := sel.MatchNames
	if len(names) == 0 {
		names = []string{own}
	}
	return section{{Key: "names", Value: names}}
}
