package promcr

import (
	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// Scrape classes (prometheus_cr.scrape_classes) as the Prometheus Operator applies them: a
// resource names one in spec.scrapeClass, or gets the default class. The class's relabelings come
// after the generated rules and before the resource's own; its metric relabelings before the
// resource's; its TLS files, authorization, fallback protocol and attachMetadata only where the
// resource set none.

// scrapeClass returns the class a resource names (name, from spec.scrapeClass), the default class
// when it names none, or nil when none applies. A name that is not defined is an error.
func (t *translator) scrapeClass(name *string) (*monv1.ScrapeClass, error) {
	classes := t.opts.ScrapeClasses
	if name != nil && *name != "" {
		for i := range classes {
			if classes[i].Name == *name {
				return &classes[i], nil
			}
		}
		return nil, t.classErr("scrapeClass", "scrape class %q is not defined in prometheus_cr.scrape_classes", *name)
	}
	for i := range classes {
		if d := classes[i].Default; d != nil && *d {
			return &classes[i], nil
		}
	}
	return nil, nil
}

// classErr names a field of the resource's spec (not of the endpoint the translator is at).
func (t *translator) classErr(field, format string, args ...any) error {
	top := *t
	top.path = "spec"
	return top.errf(field, format, args...)
}

// classRules are the class's relabelings, to go between the generated rules and the resource's.
func classRules(c *monv1.ScrapeClass) []section {
	if c == nil {
		return nil
	}
	return relabels(c.Relabelings)
}

// classMetricRelabels puts the class's metric relabelings before the resource's.
func classMetricRelabels(c *monv1.ScrapeClass, own []monv1.RelabelConfig) []monv1.RelabelConfig {
	if c == nil || len(c.MetricRelabelings) == 0 {
		return own
	}
	return append(append([]monv1.RelabelConfig(nil), c.MetricRelabelings...), own...)
}

// classFallback is the resource's fallback scrape protocol, else the class's.
func classFallback(c *monv1.ScrapeClass, own *monv1.ScrapeProtocol) *monv1.ScrapeProtocol {
	if own == nil && c != nil {
		return c.FallbackScrapeProtocol
	}
	return own
}

// classAttachMetadata is the resource's attachMetadata, else the class's.
func classAttachMetadata(c *monv1.ScrapeClass, own *monv1.AttachMetadata) *monv1.AttachMetadata {
	if own == nil && c != nil {
		return c.AttachMetadata
	}
	return own
}

// applyClass adds what the class gives a rendered job that the resource left unset: the CA,
// certificate and key files of tls_config (each only when the resource has neither the file nor
// the inline form) and, when the resource has no authentication at all, the class's authorization.
// The class's files are the allocator administrator's, so deny_fs_access_through_sms does not apply.
func (t *translator) applyClass(sc *section, c *monv1.ScrapeClass) error {
	if c == nil {
		return nil
	}
	if c.TLSConfig != nil {
		tls, _ := get(*sc, "tls_config").(section)
		changed := false
		for _, f := range []struct{ inline, file, v string }{
			{"ca", "ca_file", c.TLSConfig.CAFile}, {"cert", "cert_file", c.TLSConfig.CertFile}, {"key", "key_file", c.TLSConfig.KeyFile}} {
			if f.v != "" && get(tls, f.inline) == nil && get(tls, f.file) == nil {
				put(&tls, f.file, f.v)
				changed = true
			}
		}
		if changed {
			set(sc, "tls_config", tls)
		}
	}
	if a := c.Authorization; a != nil && get(*sc, "basic_auth") == nil && get(*sc, "authorization") == nil && get(*sc, "oauth2") == nil {
		typ := a.Type
		if typ == "" {
			typ = "Bearer"
		}
		auth := section{{Key: "type", Value: typ}}
		switch {
		case a.Credentials != nil:
			own := *t
			own.ns, own.path = t.opts.OwnNamespace, "prometheus_cr.scrape_classes["+c.Name+"]"
			cred, err := own.secret("authorization.credentials", a.Credentials)
			if err != nil {
				return err
			}
			put(&auth, "credentials", cred)
		case a.CredentialsFile != "":
			put(&auth, "credentials_file", a.CredentialsFile)
		}
		put(sc, "authorization", auth)
	}
	return nil
}
