// Package promcr turns Prometheus Operator resources (ServiceMonitor, PodMonitor, Probe and
// ScrapeConfig) into Prometheus scrape configurations, as the allocator's prometheus_cr option
// does upstream, and watches them in the cluster. The translation is pure (golden tested);
// secrets and config maps it references are read through a Store in the resource's namespace
// and written into the configuration in clear, which the HTTP API redacts on plain HTTP.
package promcr

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	yaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Store reads the keys of secrets and config maps that resources reference.
type Store interface {
	SecretKey(namespace string, sel corev1.SecretKeySelector) (string, error)
	ConfigMapKey(namespace string, sel corev1.ConfigMapKeySelector) (string, error)
}

// Options are the prometheus_cr settings the translation needs.
type Options struct {
	// DenyFSAccess refuses resources that name files of the allocator's or collector's file
	// system (bearerTokenFile, tlsConfig caFile/certFile/keyFile, fileSDConfigs):
	// deny_fs_access_through_sms.
	DenyFSAccess bool
	// ScrapeClasses are prometheus_cr.scrape_classes; OwnNamespace is where a class's
	// authorization secret is read (the collectors' namespace).
	ScrapeClasses []monv1.ScrapeClass
	OwnNamespace  string
}

type section = yaml.MapSlice

// item appends key: value to s when value is not empty.
func put(s *section, key string, value any) {
	switch v := value.(type) {
	case nil:
		return
	case string:
		if v == "" {
			return
		}
	case *string:
		if v == nil || *v == "" {
			return
		}
		value = *v
	case *bool:
		if v == nil {
			return
		}
		value = *v
	case *int64:
		if v == nil {
			return
		}
		value = *v
	case section:
		if len(v) == 0 {
			return
		}
	case []section:
		if len(v) == 0 {
			return
		}
	case []string:
		if len(v) == 0 {
			return
		}
	case map[string][]string:
		if len(v) == 0 {
			return
		}
	case map[string]string:
		if len(v) == 0 {
			return
		}
	}
	*s = append(*s, yaml.MapItem{Key: key, Value: value})
}

// get returns the value of key in s, nil when absent.
func get(s section, key string) any {
	for _, it := range s {
		if it.Key == key {
			return it.Value
		}
	}
	return nil
}

// set replaces the value of key in s, or appends it.
func set(s *section, key string, v any) {
	for i := range *s {
		if (*s)[i].Key == key {
			(*s)[i].Value = v
			return
		}
	}
	*s = append(*s, yaml.MapItem{Key: key, Value: v})
}

// translator holds what one resource's translation needs.
type translator struct {
	ns    string
	store Store
	opts  Options
	path  string // field path prefix for errors, e.g. "spec.endpoints[0]"
}

func (t *translator) errf(field, format string, args ...any) error {
	return fmt.Errorf("%s.%s: %s", t.path, field, fmt.Sprintf(format, args...))
}

func (t *translator) secret(field string, sel *corev1.SecretKeySelector) (string, error) {
	if sel == nil {
		return "", nil
	}
	if t.store == nil {
		return "", t.errf(field, "secret %s/%s: no Kubernetes connection to read it", t.ns, sel.Name)
	}
	v, err := t.store.SecretKey(t.ns, *sel)
	if err != nil {
		return "", t.errf(field, "%v", err)
	}
	return v, nil
}

func (t *translator) secretOrConfigMap(field string, s monv1.SecretOrConfigMap) (string, error) {
	switch {
	case s.Secret != nil && s.ConfigMap != nil:
		return "", t.errf(field, "only one of secret and configMap may be set")
	case s.Secret != nil:
		return t.secret(field+".secret", s.Secret)
	case s.ConfigMap != nil:
		if t.store == nil {
			return "", t.errf(field, "config map %s/%s: no Kubernetes connection to read it", t.ns, s.ConfigMap.Name)
		}
		v, err := t.store.ConfigMapKey(t.ns, *s.ConfigMap)
		if err != nil {
			return "", t.errf(field+".configMap", "%v", err)
		}
		return v, nil
	}
	return "", nil
}

// auth renders basic_auth, authorization (also for a bearer token secret), oauth2,
// follow_redirects and enable_http2. Nothing of c is dropped: a target that asks for credentials
// is never scraped without them.
//
//nolint:staticcheck // bearerTokenSecret is deprecated but still served; honoured as upstream does
func (t *translator) auth(out *section, c monv1.HTTPConfigWithoutTLS) error {
	n := 0
	if c.BasicAuth != nil {
		n++
		user, err := t.secret("basicAuth.username", &c.BasicAuth.Username)
		if err != nil {
			return err
		}
		pass, err := t.secret("basicAuth.password", &c.BasicAuth.Password)
		if err != nil {
			return err
		}
		put(out, "basic_auth", section{{Key: "username", Value: user}, {Key: "password", Value: pass}})
	}
	authz := c.Authorization
	if authz == nil && c.BearerTokenSecret != nil && c.BearerTokenSecret.Name != "" {
		authz = &monv1.SafeAuthorization{Credentials: c.BearerTokenSecret}
	}
	if authz != nil {
		n++
		if strings.EqualFold(strings.TrimSpace(authz.Type), "basic") {
			return t.errf("authorization.type", `"Basic" is not allowed; use basicAuth`)
		}
		cred, err := t.secret("authorization.credentials", authz.Credentials)
		if err != nil {
			return err
		}
		typ := authz.Type
		if typ == "" {
			typ = "Bearer"
		}
		put(out, "authorization", section{{Key: "type", Value: typ}, {Key: "credentials", Value: cred}})
	}
	if oauth := c.OAuth2; oauth != nil {
		n++
		id, err := t.secretOrConfigMap("oauth2.clientId", oauth.ClientID)
		if err != nil {
			return err
		}
		sec, err := t.secret("oauth2.clientSecret", &oauth.ClientSecret)
		if err != nil {
			return err
		}
		o := section{{Key: "client_id", Value: id}, {Key: "client_secret", Value: sec}, {Key: "token_url", Value: string(oauth.TokenURL)}}
		put(&o, "scopes", oauth.Scopes)
		put(&o, "endpoint_params", oauth.EndpointParams)
		put(out, "oauth2", o)
	}
	if n > 1 {
		return t.errf("basicAuth", "at most one of basicAuth, authorization (or bearerTokenSecret) and oauth2 may be set")
	}
	put(out, "follow_redirects", c.FollowRedirects)
	put(out, "enable_http2", c.EnableHTTP2)
	return nil
}

// tls renders tls_config from the safe part (secrets and config maps) and, unless file access
// is denied, the file part.
func (t *translator) tls(out *section, safe *monv1.SafeTLSConfig, files *monv1.TLSFilesConfig) error {
	var s section
	if safe != nil {
		for _, f := range []struct {
			key, field string
			src        monv1.SecretOrConfigMap
		}{{"ca", "tlsConfig.ca", safe.CA}, {"cert", "tlsConfig.cert", safe.Cert}} {
			v, err := t.secretOrConfigMap(f.field, f.src)
			if err != nil {
				return err
			}
			put(&s, f.key, v)
		}
		key, err := t.secret("tlsConfig.keySecret", safe.KeySecret)
		if err != nil {
			return err
		}
		put(&s, "key", key)
		put(&s, "server_name", safe.ServerName)
		put(&s, "insecure_skip_verify", safe.InsecureSkipVerify)
		if safe.MinVersion != nil {
			put(&s, "min_version", string(*safe.MinVersion))
		}
		if safe.MaxVersion != nil {
			put(&s, "max_version", string(*safe.MaxVersion))
		}
	}
	if files != nil && (files.CAFile != "" || files.CertFile != "" || files.KeyFile != "") {
		if t.opts.DenyFSAccess {
			return t.errf("tlsConfig", "caFile, certFile and keyFile are refused: deny_fs_access_through_sms is set")
		}
		for _, f := range []struct{ key, v string }{{"ca_file", files.CAFile}, {"cert_file", files.CertFile}, {"key_file", files.KeyFile}} {
			if inline := strings.TrimSuffix(f.key, "_file"); f.v != "" && get(s, inline) != nil {
				return t.errf("tlsConfig."+inline+"File", "set together with the secret or config map form; choose one")
			}
			put(&s, f.key, f.v)
		}
	}
	put(out, "tls_config", s)
	return nil
}

func proxy(out *section, p monv1.ProxyConfig) {
	put(out, "proxy_url", p.ProxyURL)
	put(out, "no_proxy", p.NoProxy)
}

// limits renders the per-job limits shared by all kinds.
func limits(out *section, sample, target, label, nameLen, valueLen, keepDropped *int64) {
	put(out, "sample_limit", sample)
	put(out, "target_limit", target)
	put(out, "label_limit", label)
	put(out, "label_name_length_limit", nameLen)
	put(out, "label_value_length_limit", valueLen)
	put(out, "keep_dropped_targets", keepDropped)
}

// histograms renders the native-histogram settings and body_size_limit shared by the monitor kinds.
func histograms(out *section, h monv1.NativeHistogramConfig, bodySize *monv1.ByteSize) {
	put(out, "scrape_native_histograms", h.ScrapeNativeHistograms)
	put(out, "always_scrape_classic_histograms", h.ScrapeClassicHistograms)
	put(out, "native_histogram_bucket_limit", h.NativeHistogramBucketLimit)
	if h.NativeHistogramMinBucketFactor != nil {
		put(out, "native_histogram_min_bucket_factor", h.NativeHistogramMinBucketFactor.AsApproximateFloat64())
	}
	put(out, "convert_classic_histograms_to_nhcb", h.ConvertClassicHistogramsToNHCB)
	if bodySize != nil {
		put(out, "body_size_limit", string(*bodySize))
	}
}

func protocols(out *section, ps []monv1.ScrapeProtocol, fallback *monv1.ScrapeProtocol) {
	if len(ps) > 0 {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = string(p)
		}
		put(out, "scrape_protocols", s)
	}
	if fallback != nil {
		put(out, "fallback_scrape_protocol", string(*fallback))
	}
}

// relabels renders relabel rules; actions are lower-cased as Prometheus writes them.
func relabels(rs []monv1.RelabelConfig) []section {
	out := make([]section, 0, len(rs))
	for _, r := range rs {
		var s section
		if len(r.SourceLabels) > 0 {
			src := make([]string, len(r.SourceLabels))
			for i, l := range r.SourceLabels {
				src[i] = string(l)
			}
			put(&s, "source_labels", src)
		}
		put(&s, "separator", r.Separator)
		put(&s, "target_label", r.TargetLabel)
		put(&s, "regex", r.Regex)
		if r.Modulus != 0 {
			put(&s, "modulus", r.Modulus)
		}
		if r.Replacement != nil {
			s = append(s, yaml.MapItem{Key: "replacement", Value: *r.Replacement})
		}
		put(&s, "action", strings.ToLower(r.Action))
		out = append(out, s)
	}
	return out
}

func rule(kv ...any) section {
	s := make(section, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		s = append(s, yaml.MapItem{Key: kv[i], Value: kv[i+1]})
	}
	return s
}

var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// sanitize turns a Kubernetes label name into the suffix of a discovery meta label.
func sanitize(name string) string { return invalidLabelChars.ReplaceAllString(name, "_") }

// selectorRules keeps the targets whose object (meta prefix such as
// __meta_kubernetes_service_label_) matches sel.
func selectorRules(sel metav1.LabelSelector, labelPrefix, presentPrefix string) ([]section, error) {
	var out []section
	keys := make([]string, 0, len(sel.MatchLabels))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, rule("source_labels", []string{labelPrefix + sanitize(k), presentPrefix + sanitize(k)},
			"regex", "("+regexp.QuoteMeta(sel.MatchLabels[k])+");true", "action", "keep"))
	}
	for i, e := range sel.MatchExpressions {
		l, p := labelPrefix+sanitize(e.Key), presentPrefix+sanitize(e.Key)
		quoted := make([]string, len(e.Values))
		for j, v := range e.Values {
			quoted[j] = regexp.QuoteMeta(v)
		}
		switch e.Operator {
		case "In":
			out = append(out, rule("source_labels", []string{l, p}, "regex", "("+strings.Join(quoted, "|")+");true", "action", "keep"))
		case "NotIn":
			out = append(out, rule("source_labels", []string{l, p}, "regex", "("+strings.Join(quoted, "|")+");true", "action", "drop"))
		case "Exists":
			out = append(out, rule("source_labels", []string{p}, "regex", "true", "action", "keep"))
		case "DoesNotExist":
			out = append(out, rule("source_labels", []string{p}, "regex", "true", "action", "drop"))
		default:
			return nil, fmt.Errorf("spec.selector.matchExpressions[%d].operator: %q is not one of In, NotIn, Exists, DoesNotExist", i, e.Operator)
		}
	}
	return out, nil
}
