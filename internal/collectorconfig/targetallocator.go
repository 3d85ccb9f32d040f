package collectorconfig

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Paths and defaults of the target allocator wiring.
const (
	// DefaultTargetAllocatorInterval is how often the prometheus receiver asks the target allocator
	// for its targets.
	DefaultTargetAllocatorInterval = "30s"
	// TargetAllocatorCollectorID is the collector_id the receiver reports; the pod name, expanded by
	// the collector from the POD_NAME environment variable.
	TargetAllocatorCollectorID = "${POD_NAME}"
	// TargetAllocatorTLSDir is where the collector mounts its client certificate for mTLS.
	TargetAllocatorTLSDir = "/tls"
	// TargetAllocatorTLSReloadInterval is how often the receiver rereads its client certificate
	// (renewed by the operator well before it expires).
	TargetAllocatorTLSReloadInterval = "1h"
)

// TargetAllocatorOptions describe the target allocator a collector's prometheus receiver is pointed at.
type TargetAllocatorOptions struct {
	// ServiceName is the target allocator's Service, e.g. "<name>-targetallocator".
	ServiceName string
	// Interval is the target refresh interval (spec.targetAllocator.collectorTargetReloadInterval);
	// empty means 30s.
	Interval string
	// MTLS switches the endpoint to https://<service>:443 and adds the client TLS files under /tls
	// (ca.crt, tls.crt, tls.key).
	MTLS bool
}

// RewriteForTargetAllocator returns a copy of raw in which receivers.prometheus takes its targets
// from the target allocator, as upstream does: its target_allocator object gets endpoint
// http://<service>:80, interval and collector_id ${POD_NAME} (other keys there are kept), and
// config.scrape_configs is removed, since the target allocator now owns them. With MTLS the
// endpoint is https://<service>:443 and tls gets ca_file, cert_file, key_file and reload_interval. raw is not
// modified. It fails, naming the field under fldPath, when there is no prometheus receiver or its
// config (or target_allocator) is not an object.
func RewriteForTargetAllocator(raw map[string]any, opts TargetAllocatorOptions, fldPath *field.Path) (map[string]any, error) {
	if opts.ServiceName == "" {
		return nil, fmt.Errorf("the target allocator service name must not be empty")
	}
	out := deepCopyMap(raw)
	prom, promCfg, err := prometheusReceiver(out, fldPath)
	if err != nil {
		return nil, err
	}
	ta, ok := objectOrEmpty(prom["target_allocator"])
	if !ok {
		return nil, field.Invalid(fldPath.Child("receivers", "prometheus", "target_allocator"),
			typeName(prom["target_allocator"]), "must be an object")
	}
	interval := opts.Interval
	if interval == "" {
		interval = DefaultTargetAllocatorInterval
	}
	ta["endpoint"] = "http://" + opts.ServiceName + ":80"
	ta["interval"] = interval
	ta["collector_id"] = TargetAllocatorCollectorID
	if opts.MTLS {
		tls, ok := objectOrEmpty(ta["tls"])
		if !ok {
			return nil, field.Invalid(fldPath.Child("receivers", "prometheus", "target_allocator", "tls"),
				typeName(ta["tls"]), "must be an object")
		}
		tls["ca_file"] = TargetAllocatorTLSDir + "/ca.crt"
		tls["cert_file"] = TargetAllocatorTLSDir + "/tls.crt"
		tls["key_file"] = TargetAllocatorTLSDir + "/tls.key"
		// The operator renews the client certificate in its Secret; the receiver rereads it.
		tls["reload_interval"] = TargetAllocatorTLSReloadInterval
		ta["tls"] = tls
		ta["endpoint"] = "https://" + opts.ServiceName + ":443"
	}
	prom["target_allocator"] = ta
	delete(promCfg, "scrape_configs")
	return out, nil
}

// prometheusReceiver returns receivers.prometheus and its config object from cfg (not copies).
func prometheusReceiver(cfg map[string]any, fldPath *field.Path) (prom, promCfg map[string]any, err error) {
	p := fldPath.Child("receivers", "prometheus")
	v, present := getMap(cfg, "receivers")["prometheus"]
	if !present {
		return nil, nil, field.Required(p, "the target allocator needs a prometheus receiver")
	}
	prom, ok := v.(map[string]any)
	if !ok {
		return nil, nil, field.Invalid(p, typeName(v), "must be an object with a config")
	}
	cv, present := prom["config"]
	if !present {
		return nil, nil, field.Required(p.Child("config"), "the prometheus receiver needs a config")
	}
	promCfg, ok = cv.(map[string]any)
	if !ok {
		return nil, nil, field.Invalid(p.Child("config"), typeName(cv), "must be an object")
	}
	return prom, promCfg, nil
}

// PrometheusScrapeConfigs returns copies of receivers.prometheus.config.scrape_configs for the
// target allocator's own config. The collector expands "$$" to "$" but the target allocator does
// not, so "$$" becomes "$" in the replacement of every relabel_configs and metric_relabel_configs
// entry. It returns nil when there are no scrape configs and an error naming the field under
// fldPath when the shapes are wrong.
func PrometheusScrapeConfigs(raw map[string]any, fldPath *field.Path) ([]map[string]any, error) {
	cfg := getMap(getMap(getMap(raw, "receivers"), "prometheus"), "config")
	p := fldPath.Child("receivers", "prometheus", "config", "scrape_configs")
	v := cfg["scrape_configs"]
	if v == nil {
		return nil, nil
	}
	list, ok := asList(v)
	if !ok {
		return nil, field.Invalid(p, typeName(v), "must be a list of scrape configs")
	}
	out := make([]map[string]any, 0, len(list))
	for i, e := range list {
		sc, ok := e.(map[string]any)
		if !ok {
			return nil, field.Invalid(p.Index(i), typeName(e), "must be an object")
		}
		sc = deepCopyMap(sc)
		for _, key := range []string{"relabel_configs", "metric_relabel_configs"} {
			if err := unescapeReplacements(sc, key, p.Index(i).Child(key)); err != nil {
				return nil, err
			}
		}
		out = append(out, sc)
	}
	return out, nil
}

func unescapeReplacements(sc map[string]any, key string, p *field.Path) error {
	v, present := sc[key]
	if !present || v == nil {
		return nil
	}
	list, ok := asList(v)
	if !ok {
		return field.Invalid(p, typeName(v), "must be a list of relabel configs")
	}
	for j, rc := range list {
		m, ok := rc.(map[string]any)
		if !ok {
			return field.Invalid(p.Index(j), typeName(rc), "must be an object")
		}
		r, present := m["replacement"]
		if !present {
			continue
		}
		s, ok := r.(string)
		if !ok {
			return field.Invalid(p.Index(j).Child("replacement"), typeName(r), "must be a string")
		}
		m["replacement"] = strings.ReplaceAll(s, "$$", "$")
	}
	return nil
}

// PrometheusGlobalConfig returns a copy of receivers.prometheus.config.global, nil when absent.
func PrometheusGlobalConfig(raw map[string]any) map[string]any {
	return deepCopyMap(getMap(getMap(getMap(getMap(raw, "receivers"), "prometheus"), "config"), "global"))
}
