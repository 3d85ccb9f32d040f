package promcr

import (
	"fmt"
	"strings"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
)

// ScrapeConfig returns the scrape configuration of a ScrapeConfig resource, named
// scrapeConfig/<namespace>/<name>. Static, file, HTTP, Kubernetes and DNS discovery are
// translated; the other discovery kinds are refused with an error naming the field.
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
	if err := unsupported(s); err != nil {
		return nil, t.errf(err.Error(), "this discovery is not supported by the target allocator; use static, file, HTTP, Kubernetes or DNS discovery")
	}
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
	var dns []section
	for _, d := range s.DNSSDConfigs {
		g := section{{Key: "names", Value: d.Names}}
		if d.RefreshInterval != nil {
			put(&g, "refresh_interval", string(*d.RefreshInterval))
		}
		if d.Type != nil {
			put(&g, "type", string(*d.Type))
		}
		if d.Port != nil {
			put(&g, "port", int64(*d.Port))
		}
		dns = append(dns, g)
	}
	put(&sc, "dns_sd_configs", dns)

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
	var https []section
	for i, h := range s.HTTPSDConfigs {
		sub := &translator{ns: t.ns, store: t.store, opts: t.opts, path: fmt.Sprintf("%s.httpSDConfigs[%d]", t.path, i)}
		g := section{{Key: "url", Value: string(h.URL)}}
		if h.RefreshInterval != nil {
			put(&g, "refresh_interval", string(*h.RefreshInterval))
		}
		if err := sub.auth(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: h.BasicAuth, Authorization: h.Authorization, OAuth2: h.OAuth2, FollowRedirects: h.FollowRedirects}); err != nil {
			return err
		}
		if err := sub.tls(&g, h.TLSConfig, nil); err != nil {
			return err
		}
		proxy(&g, h.ProxyConfig)
		put(&g, "enable_http2", h.EnableHTTP2)
		https = append(https, g)
	}
	put(out, "http_sd_configs", https)

	var kubes []section
	for i, k := range s.KubernetesSDConfigs {
		sub := &translator{ns: t.ns, store: t.store, opts: t.opts, path: fmt.Sprintf("%s.kubernetesSDConfigs[%d]", t.path, i)}
		g := section{{Key: "role", Value: strings.ToLower(string(k.Role))}}
		put(&g, "api_server", k.APIServer)
		if n := k.Namespaces; n != nil {
			var ns section
			put(&ns, "own_namespace", n.IncludeOwnNamespace)
			put(&ns, "names", n.Names)
			put(&g, "namespaces", ns)
		}
		var sels []section
		for _, se := range k.Selectors {
			x := section{{Key: "role", Value: strings.ToLower(string(se.Role))}}
			put(&x, "label", se.Label)
			put(&x, "field", se.Field)
			sels = append(sels, x)
		}
		put(&g, "selectors", sels)
		if am := k.AttachMetadata; am != nil && am.Node != nil {
			put(&g, "attach_metadata", section{{Key: "node", Value: *am.Node}})
		}
		if err := sub.auth(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: k.BasicAuth, Authorization: k.Authorization, OAuth2: k.OAuth2, FollowRedirects: k.FollowRedirects}); err != nil {
			return err
		}
		if err := sub.tls(&g, k.TLSConfig, nil); err != nil {
			return err
		}
		proxy(&g, k.ProxyConfig)
		put(&g, "enable_http2", k.EnableHTTP2)
		kubes = append(kubes, g)
	}
	put(out, "kubernetes_sd_configs", kubes)

	return nil
}

// unsupported names the first discovery field set that the translation does not handle.
func unsupported(s monv1alpha1.ScrapeConfigSpec) error {
	for _, f := range []struct {
		name string
		n    int
	}{
		{"consulSDConfigs", len(s.ConsulSDConfigs)}, {"ec2SDConfigs", len(s.EC2SDConfigs)},
		{"azureSDConfigs", len(s.AzureSDConfigs)}, {"gceSDConfigs", len(s.GCESDConfigs)},
		{"openstackSDConfigs", len(s.OpenStackSDConfigs)}, {"digitalOceanSDConfigs", len(s.DigitalOceanSDConfigs)},
		{"kumaSDConfigs", len(s.KumaSDConfigs)}, {"eurekaSDConfigs", len(s.EurekaSDConfigs)},
		{"dockerSDConfigs", len(s.DockerSDConfigs)}, {"linodeSDConfigs", len(s.LinodeSDConfigs)},
		{"hetznerSDConfigs", len(s.HetznerSDConfigs)}, {"nomadSDConfigs", len(s.NomadSDConfigs)},
		{"dockerSwarmSDConfigs", len(s.DockerSwarmSDConfigs)}, {"puppetDBSDConfigs", len(s.PuppetDBSDConfigs)},
		{"lightSailSDConfigs", len(s.LightSailSDConfigs)}, {"ovhcloudSDConfigs", len(s.OVHCloudSDConfigs)},
		{"scalewaySDConfigs", len(s.ScalewaySDConfigs)}, {"ionosSDConfigs", len(s.IonosSDConfigs)},
	} {
		if f.n > 0 {
			return fmt.Errorf("%s", f.name)
		}
	}
	return nil
}
