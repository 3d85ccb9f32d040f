package promcr

import (
	"fmt"
	"sort"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// Probe returns the scrape configuration of a Probe, named probe/<namespace>/<name>: the prober
// is scraped with each target in the target parameter.
func Probe(p *monv1.Probe, store Store, opts Options) (section, error) {
	t := &translator{ns: p.Namespace, store: store, opts: opts, path: "spec"}
	sc, err := t.probe(p)
	if err != nil {
		return nil, fmt.Errorf("Probe %s/%s: %w", p.Namespace, p.Name, err)
	}
	return sc, nil
}

func (t *translator) probe(p *monv1.Probe) (section, error) {
	s := p.Spec
	if s.ProberSpec.URL == "" {
		return nil, t.errf("prober.url", "required")
	}
	class, err := t.scrapeClass(s.ScrapeClassName)
	if err != nil {
		return nil, err
	}
	sc := section{{Key: "job_name", Value: fmt.Sprintf("probe/%s/%s", p.Namespace, p.Name)}}
	put(&sc, "scrape_interval", string(s.Interval))
	put(&sc, "scrape_timeout", string(s.ScrapeTimeout))
	path := s.ProberSpec.Path
	if path == "" {
		path = "/probe"
	}
	put(&sc, "metrics_path", path)
	if s.ProberSpec.Scheme != nil {
		put(&sc, "scheme", s.ProberSpec.Scheme.String())
	}
	params := map[string][]string{}
	if s.Module != "" {
		params["module"] = []string{s.Module}
	}
	for _, pp := range s.Params {
		params[pp.Name] = append(params[pp.Name], pp.Values...)
	}
	put(&sc, "params", params)
	proxy(&sc, s.ProberSpec.ProxyConfig)
	hc := s.HTTPConfigWithoutTLS
	if s.Authorization != nil { // the Probe's own field shadows the inline one in JSON
		hc.Authorization = s.Authorization
	}
	if err := t.auth(&sc, hc); err != nil {
		return nil, err
	}
	if err := t.tls(&sc, s.TLSConfig, nil); err != nil {
		return nil, err
	}
	if err := t.applyClass(&sc, class); err != nil {
		return nil, err
	}

	rules := []section{rule("source_labels", []string{"job"}, "target_label", "__tmp_prometheus_job_name")}
	if s.JobName != "" {
		rules = append(rules, rule("target_label", "job", "replacement", s.JobName))
	}
	switch {
	case s.Targets.StaticConfig != nil && s.Targets.Ingress != nil:
		return nil, t.errf("targets", "only one of staticConfig and ingress may be set")
	case s.Targets.StaticConfig != nil:
		st := s.Targets.StaticConfig
		lbls := map[string]string{"namespace": p.Namespace}
		for k, v := range st.Labels {
			lbls[k] = v
		}
		put(&sc, "static_configs", []section{{{Key: "targets", Value: st.Targets}, {Key: "labels", Value: sortedMap(lbls)}}})
		rules = append(rules,
			rule("source_labels", []string{"__address__"}, "target_label", "__param_target"),
			rule("source_labels", []string{"__param_target"}, "target_label", "instance"))
		rules = append(append(rules, classRules(class)...), relabels(st.RelabelConfigs)...)
	case s.Targets.Ingress != nil:
		in := s.Targets.Ingress
		kubernetesSD(&sc, "ingress", in.NamespaceSelector, p.Namespace, nil)
		sel, err := selectorRules(in.Selector, "__meta_kubernetes_ingress_label_", "__meta_kubernetes_ingress_labelpresent_")
		if err != nil {
			return nil, err
		}
		rules = append(rules, sel...)
		rules = append(rules,
			rule("source_labels", []string{"__meta_kubernetes_ingress_scheme", "__address__", "__meta_kubernetes_ingress_path"},
				"separator", ";", "regex", "(.+);(.+);(.+)", "replacement", "${1}://${2}${3}", "target_label", "__param_target"),
			rule("source_labels", []string{"__meta_kubernetes_namespace"}, "target_label", "namespace"),
			rule("source_labels", []string{"__meta_kubernetes_ingress_name"}, "target_label", "ingress"),
			rule("source_labels", []string{"__param_target"}, "target_label", "instance"))
		rules = append(append(rules, classRules(class)...), relabels(in.RelabelConfigs)...)
	default:
		return nil, t.errf("targets", "one of staticConfig and ingress is required")
	}
	rules = append(rules, rule("target_label", "__address__", "replacement", s.ProberSpec.URL))
	relabelling(&sc, rules, nil, classMetricRelabels(class, s.MetricRelabelConfigs))
	limits(&sc, s.SampleLimit, s.TargetLimit, s.LabelLimit, s.LabelNameLengthLimit, s.LabelValueLengthLimit, s.KeepDroppedTargets)
	protocols(&sc, s.ScrapeProtocols, classFallback(class, s.FallbackScrapeProtocol))
	histograms(&sc, s.NativeHistogramConfig, nil)
	return sc, nil
}

// sortedMap renders a string map with its keys in order (golden files stay stable).
func sortedMap(m map[string]string) section {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := make(section, len(keys))
	for i, k := range keys {
		s[i].Key, s[i].Value = k, m[k]
	}
	return s
}
