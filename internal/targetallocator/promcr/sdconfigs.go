package promcr

import (
	"fmt"
	"strings"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// sdList renders the n configs of one discovery field of a ScrapeConfig under Prometheus' key,
// each by render with a translator whose errors name spec.<field>[i].
func (t *translator) sdList(out *section, field, key string, n int, render func(sub *translator, i int) (section, error)) error {
	var list []section
	for i := range n {
		sub := &translator{ns: t.ns, store: t.store, opts: t.opts, path: fmt.Sprintf("%s.%s[%d]", t.path, field, i)}
		g, err := render(sub, i)
		if err != nil {
			return err
		}
		list = append(list, g)
	}
	put(out, key, list)
	return nil
}

// client renders the HTTP client settings of a discovery's connection to its API: credentials
// (resolved from secrets, never dropped), tls_config and the proxy.
func (t *translator) client(out *section, c monv1.HTTPConfigWithoutTLS, tls *monv1.SafeTLSConfig, p monv1.ProxyConfig) error {
	if err := t.auth(out, c); err != nil {
		return err
	}
	if err := t.tls(out, tls, nil); err != nil {
		return err
	}
	proxy(out, p)
	return nil
}

func duration(out *section, key string, d *monv1.Duration) {
	if d != nil {
		put(out, key, string(*d))
	}
}

func port(out *section, p *int32) {
	if p != nil {
		put(out, "port", int64(*p))
	}
}

func filters(fs monv1alpha1.Filters) []section {
	var out []section
	for _, f := range fs {
		out = append(out, section{{Key: "name", Value: f.Name}, {Key: "values", Value: f.Values}})
	}
	return out
}

// lower is the Prometheus spelling of the operator's capitalised enum values (role, availability).
func lower[T ~string](v T) string { return strings.ToLower(string(v)) }

// putSecret resolves sel through the store and writes it under key.
func (t *translator) putSecret(out *section, key, field string, sel *corev1.SecretKeySelector) error {
	v, err := t.secret(field, sel)
	if err != nil {
		return err
	}
	put(out, key, v)
	return nil
}

// serviceSD renders the discovery of service registries: Consul, Eureka, Nomad, Kuma and PuppetDB.
func (t *translator) serviceSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	err := t.sdList(out, "consulSDConfigs", "consul_sd_configs", len(s.ConsulSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.ConsulSDConfigs[i]
		g := section{{Key: "server", Value: c.Server}}
		put(&g, "path_prefix", c.PathPrefix)
		if err := sub.putSecret(&g, "token", "tokenRef", c.TokenRef); err != nil {
			return nil, err
		}
		put(&g, "datacenter", c.Datacenter)
		put(&g, "namespace", c.Namespace)
		put(&g, "partition", c.Partition)
		put(&g, "scheme", c.Scheme.String())
		put(&g, "services", c.Services)
		put(&g, "tags", c.Tags)
		put(&g, "tag_separator", c.TagSeparator)
		put(&g, "node_meta", sortedMap(c.NodeMeta))
		put(&g, "filter", c.Filter)
		put(&g, "health_filter", c.HealthFilter)
		put(&g, "allow_stale", c.AllowStale)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHttp2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	err = t.sdList(out, "eurekaSDConfigs", "eureka_sd_configs", len(s.EurekaSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.EurekaSDConfigs[i]
		g := section{{Key: "server", Value: string(c.Server)}}
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	err = t.sdList(out, "nomadSDConfigs", "nomad_sd_configs", len(s.NomadSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.NomadSDConfigs[i]
		g := section{{Key: "server", Value: string(c.Server)}}
		put(&g, "allow_stale", c.AllowStale)
		put(&g, "namespace", c.Namespace)
		put(&g, "region", c.Region)
		put(&g, "tag_separator", c.TagSeparator)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	err = t.sdList(out, "kumaSDConfigs", "kuma_sd_configs", len(s.KumaSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.KumaSDConfigs[i]
		g := section{{Key: "server", Value: string(c.Server)}}
		put(&g, "client_id", c.ClientID)
		duration(&g, "refresh_interval", c.RefreshInterval)
		duration(&g, "fetch_timeout", c.FetchTimeout)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "puppetDBSDConfigs", "puppetdb_sd_configs", len(s.PuppetDBSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.PuppetDBSDConfigs[i]
		g := section{{Key: "url", Value: string(c.URL)}, {Key: "query", Value: c.Query}}
		put(&g, "include_parameters", c.IncludeParameters)
		port(&g, c.Port)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
}

// dockerSD renders Docker and Docker Swarm discovery. A unix:// host is a socket on the
// allocator's file system, so DenyFSAccess refuses it as it refuses file paths.
func (t *translator) dockerSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	host := func(sub *translator, h string) error {
		if sub.opts.DenyFSAccess && strings.HasPrefix(strings.ToLower(h), "unix:") {
			return sub.errf("host", "%q is a socket on the file system, refused: deny_fs_access_through_sms is set", h)
		}
		return nil
	}
	err := t.sdList(out, "dockerSDConfigs", "docker_sd_configs", len(s.DockerSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.DockerSDConfigs[i]
		if err := host(sub, c.Host); err != nil {
			return nil, err
		}
		g := section{{Key: "host", Value: c.Host}}
		port(&g, c.Port)
		put(&g, "host_networking_host", c.HostNetworkingHost)
		put(&g, "match_first_network", c.MatchFirstNetwork)
		put(&g, "filters", filters(c.Filters))
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "dockerSwarmSDConfigs", "dockerswarm_sd_configs", len(s.DockerSwarmSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.DockerSwarmSDConfigs[i]
		if err := host(sub, c.Host); err != nil {
			return nil, err
		}
		g := section{{Key: "host", Value: c.Host}, {Key: "role", Value: lower(c.Role)}}
		port(&g, c.Port)
		put(&g, "filters", filters(c.Filters))
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
}
