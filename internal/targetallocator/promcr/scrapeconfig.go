package promcr

import (
	"fmt"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
)

// ScrapeConfig returns the scrape configuration of a ScrapeConfig resource, named
// scrapeConfig/<namespace>/<name>. Every discovery kind of the resource is translated into its
// Prometheus <kind>_sd_configs section, credentials resolved from the resource's secrets.
func ScrapeConfig(c *monv1alpha1.ScrapeConfig, store Store, opts Options) (section, error) {
	t := &translator{ns: c.Namespace, store: store, opts: opts, path: "spec"}
	sc, err := t.scrapeConfig(c)
	if err != nil {
		return nil, fmt.Errorf("ScrapeConfig %s/%s: %w", c.Namespace, c.Name, err)
	}
	return sc, nil
}

func (t *translator) scrapeConfig(c *monv1alpha1.ScrapeConfig) (section, error) {
	s := c.Spec
	class, err := t.scrapeClass(s.ScrapeClassName)
	if err != nil {
		return nil, err
	}
	sc := section{{Key: "job_name", Value: fmt.Sprintf("scrapeConfig/%s/%s", c.Namespace, c.Name)}}
	put(&sc, "honor_labels", s.HonorLabels)
	put(&sc, "honor_timestamps", s.HonorTimestamps)
	put(&sc, "track_timestamps_staleness", s.TrackTimestampsStaleness)
	if s.ScrapeInterval != nil {
		put(&sc, "scrape_interval", string(*s.ScrapeInterval))
	}
	if s.ScrapeTimeout != nil {
		put(&sc, "scrape_timeout", string(*s.ScrapeTimeout))
	}
	put(&sc, "metrics_path", s.MetricsPath)
	put(&sc, "params", s.Params)
	if s.Scheme != nil {
		put(&sc, "scheme", s.Scheme.String())
	}
	put(&sc, "enable_compression", s.EnableCompression)
	put(&sc, "enable_http2", s.EnableHTTP2)
	proxy(&sc, s.ProxyConfig)
	if err := t.auth(&sc, monv1.HTTPConfigWithoutTLS{BasicAuth: s.BasicAuth, Authorization: s.Authorization, OAuth2: s.OAuth2}); err != nil {
		return nil, err
	}
	if err := t.tls(&sc, s.TLSConfig, nil); err != nil {
		return nil, err
	}
	if err := t.applyClass(&sc, class); err != nil {
		return nil, err
	}

	if err := t.staticAndFileSD(&sc, s); err != nil {
		return nil, err
	}
	if err := t.httpAndKubernetesSD(&sc, s); err != nil {
		return nil, err
	}
	for _, render := range []func(*section, monv1alpha1.ScrapeConfigSpec) error{
		t.dnsSD, t.serviceSD, t.dockerSD, t.awsSD, t.cloudSD,
	} {
		if err := render(&sc, s); err != nil {
			return nil, err
		}
	}

	rules := []section{rule("source_labels", []string{"job"}, "target_label", "__tmp_prometheus_job_name")}
	if s.JobName != nil && *s.JobName != "" {
		rules = append(rules, rule("target_label", "job", "replacement", *s.JobName))
	}
	rules = append(append(rules, classRules(class)...), relabels(s.RelabelConfigs)...)
	put(&sc, "relabel_configs", rules)
	put(&sc, "metric_relabel_configs", relabels(classMetricRelabels(class, s.MetricRelabelConfigs)))
	limits(&sc, s.SampleLimit, s.TargetLimit, s.LabelLimit, s.LabelNameLengthLimit, s.LabelValueLengthLimit, s.KeepDroppedTargets)
	protocols(&sc, s.ScrapeProtocols, classFallback(class, s.FallbackScrapeProtocol))
	histograms(&sc, s.NativeHistogramConfig, s.BodySizeLimit)
	return sc, nil
}

// staticAndFileSD renders static_configs and file_sd_configs.
func (t *translator) staticAndFileSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	var statics []section
	for _, st := range s.StaticConfigs {
		targets := make([]string, len(st.Targets))
		for i, tg := range st.Targets {
			targets[i] = string(tg)
		}
		g := section{{Key: "targets", Value: targets}}
		put(&g, "labels", sortedMap(st.Labels))
		statics = append(statics, g)
	}
	put(out, "static_configs", statics)

	var files []section
	for i, f := range s.FileSDConfigs {
		if t.opts.DenyFSAccess {
			return t.errf(fmt.Sprintf("fileSDConfigs[%d]", i), "refused: deny_fs_access_through_sms is set")
		}
		names := make([]string, len(f.Files))
		for j, n := range f.Files {
			names[j] = string(n)
		}
		g := section{{Key: "files", Value: names}}
		if f.RefreshInterval != nil {
			put(&g, "refresh_interval", string(*f.RefreshInterval))
		}
		files = append(files, g)
	}
	put(out, "file_sd_configs", files)

	return nil
}

// httpAndKubernetesSD renders http_sd_configs and kubernetes_sd_configs, each with its own
// authentication and TLS.
func (t *translator) httpAndKubernetesSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	err := t.sdList(out, "httpSDConfigs", "http_sd_configs", len(s.HTTPSDConfigs), func(sub *translator, i int) (section, error) {
		h := s.HTTPSDConfigs[i]
		g := section{{Key: "url", Value: string(h.URL)}}
		duration(&g, "refresh_interval", h.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: h.BasicAuth, Authorization: h.Authorization, OAuth2: h.OAuth2,
			FollowRedirects: h.FollowRedirects, EnableHTTP2: h.EnableHTTP2}, h.TLSConfig, h.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "kubernetesSDConfigs", "kubernetes_sd_configs", len(s.KubernetesSDConfigs), func(sub *translator, i int) (section, error) {
		k := s.KubernetesSDConfigs[i]
		g := section{{Key: "role", Value: lower(k.Role)}}
		put(&g, "api_server", k.APIServer)
		if n := k.Namespaces; n != nil {
			var ns section
			put(&ns, "own_namespace", n.IncludeOwnNamespace)
			put(&ns, "names", n.Names)
			put(&g, "namespaces", ns)
		}
		var sels []section
		for _, se := range k.Selectors {
			x := section{{Key: "role", Value: lower(se.Role)}}
			put(&x, "label", se.Label)
			put(&x, "field", se.Field)
			sels = append(sels, x)
		}
		put(&g, "selectors", sels)
		if am := k.AttachMetadata; am != nil && am.Node != nil {
			put(&g, "attach_metadata", section{{Key: "node", Value: *am.Node}})
		}
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: k.BasicAuth, Authorization: k.Authorization, OAuth2: k.OAuth2,
			FollowRedirects: k.FollowRedirects, EnableHTTP2: k.EnableHTTP2}, k.TLSConfig, k.ProxyConfig)
	})
}

// dnsSD renders dns_sd_configs.
func (t *translator) dnsSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	return t.sdList(out, "dnsSDConfigs", "dns_sd_configs", len(s.DNSSDConfigs), func(_ *translator, i int) (section, error) {
		d := s.DNSSDConfigs[i]
		g := section{{Key: "names", Value: d.Names}}
		duration(&g, "refresh_interval", d.RefreshInterval)
		if d.Type != nil {
			put(&g, "type", string(*d.Type))
		}
		port(&g, d.Port)
		return g, nil
	})
}
