package collectorconfig

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

const (
	// DefaultReceiverAddress is the host upstream's defaulting puts in front of receiver ports.
	DefaultReceiverAddress = "0.0.0.0"
	// DefaultMetricsPort is the port of the collector's own Prometheus metrics.
	DefaultMetricsPort int32 = 8888
	// DefaultMetricsHost is the host of the collector's own Prometheus metrics.
	DefaultMetricsHost = "0.0.0.0"
)

// DefaultOptions tune ApplyDefaults.
type DefaultOptions struct {
	// LegacyTelemetryShape adds without_type_suffix, without_units and without_scope_info set to
	// false to the default Prometheus telemetry reader, as upstream does when its feature gate
	// operator.collector.usedefaulttelemetryshape is disabled. The zero value matches the gate's
	// default (enabled).
	LegacyTelemetryShape bool
}

// ApplyDefaults returns a copy of raw with upstream's webhook defaults applied; raw is not modified.
//
//   - Used receivers and extensions with a known default port get their endpoint set to
//     0.0.0.0:<port> when it is empty, or 0.0.0.0:<port> when only ":<port>" is given
//     (for otlp, jaeger, loki and skywalking: under each listed protocol; an otlp receiver without
//     protocols gets an empty protocols object). health_check also gets path "/" when it has none.
//   - service.telemetry.metrics gets a pull Prometheus reader on 0.0.0.0:8888 when it has neither
//     an address nor readers.
//
// Components whose configuration has the wrong shape are left as they are; Validate reports them.
// The result encodes to the same JSON bytes for the same input.
func ApplyDefaults(raw map[string]any, opts DefaultOptions) map[string]any {
	c := Parse(raw)
	out := deepCopyMap(raw)
	if out == nil {
		out = map[string]any{}
	}
	for _, kind := range []Kind{KindReceiver, KindExtension} {
		section, _ := out[kind.Section()].(map[string]any)
		for _, comp := range c.UsedComponents(kind) {
			s := specFor(kind, comp.Type)
			if !s.defaultEndpoint {
				continue
			}
			if cfg, ok := defaultComponent(s, section[comp.ID]); ok {
				section[comp.ID] = cfg
			}
		}
	}
	applyTelemetryDefaults(out, opts)
	return out
}

// defaultComponent returns the defaulted configuration of one component, or false when its shape
// does not allow defaulting. cfg is already a private copy and may be changed in place.
func defaultComponent(s spec, v any) (map[string]any, bool) {
	cfg, ok := objectOrEmpty(v)
	if !ok {
		return nil, false
	}
	switch {
	case s.healthCheck:
		ep, ok1 := stringOrEmpty(cfg["endpoint"])
		path, ok2 := stringOrEmpty(cfg["path"])
		if _, ok3 := stringOrEmpty(cfg["listen_address"]); !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		if ep == "" {
			cfg["endpoint"] = DefaultReceiverAddress + ":" + strconv.Itoa(int(s.ports[0].port))
		} else if h, p, err := net.SplitHostPort(ep); err == nil && h == "" && p != "" {
			cfg["endpoint"] = DefaultReceiverAddress + ":" + p
		}
		if path == "" {
			cfg["path"] = defaultHealthCheckPath
		}
		return cfg, true
	case s.style == styleSingle:
		return cfg, defaultEndpoint(cfg, s.ports[0].port, false)
	case s.style == styleHTTP:
		http, ok := objectOrEmpty(cfg["http"])
		if !ok || !defaultEndpoint(http, s.ports[0].port, false) {
			return nil, false
		}
		cfg["http"] = http
		return cfg, true
	case s.style == styleMulti:
		protocols, ok := objectOrEmpty(cfg["protocols"])
		if !ok {
			return nil, false
		}
		// Check every protocol before changing any, so a bad one leaves the receiver untouched.
		for proto, pv := range protocols {
			_, known := findProtocol(s, proto)
			pcfg, ok := objectOrEmpty(pv)
			_, ok1 := stringOrEmpty(pcfg["endpoint"])
			_, ok2 := stringOrEmpty(pcfg["listen_address"])
			if !known || !ok || !ok1 || !ok2 {
				return nil, false
			}
		}
		for proto, pv := range protocols {
			def, _ := findProtocol(s, proto)
			pcfg, _ := objectOrEmpty(pv)
			defaultEndpoint(pcfg, def.port, true)
			protocols[proto] = pcfg
		}
		cfg["protocols"] = protocols
		return cfg, true
	}
	return nil, false
}

func findProtocol(s spec, proto string) (portDef, bool) {
	for _, d := range s.ports {
		if d.protocol == proto {
			return d, true
		}
	}
	return portDef{}, false
}

// defaultEndpoint fills in cfg["endpoint"] the way upstream's address defaulter does: an empty
// endpoint becomes 0.0.0.0:<port>; one with nothing before its first ':' (or no ':' at all) gets
// 0.0.0.0 in front of its last ':'-separated part. With portFromListen (multi-protocol receivers),
// the port of an empty endpoint is taken from listen_address when it has one.
func defaultEndpoint(cfg map[string]any, port int32, portFromListen bool) bool {
	ep, ok1 := stringOrEmpty(cfg["endpoint"])
	la, ok2 := stringOrEmpty(cfg["listen_address"])
	if !ok1 || !ok2 {
		return false
	}
	if ep == "" {
		if portFromListen && la != "" {
			if p, found, err := endpointPort(la); err == nil && found {
				port = p
			}
		}
		cfg["endpoint"] = DefaultReceiverAddress + ":" + strconv.Itoa(int(port))
		return true
	}
	parts := strings.Split(ep, ":")
	if len(parts) < 2 || parts[0] == "" {
		cfg["endpoint"] = DefaultReceiverAddress + ":" + parts[len(parts)-1]
	}
	return true
}

// objectOrEmpty returns v as an object, a new empty object for null, and false for anything else.
func objectOrEmpty(v any) (map[string]any, bool) {
	if v == nil {
		return map[string]any{}, true
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// stringOrEmpty returns v as a string, "" for null, and false for anything else.
func stringOrEmpty(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}

// applyTelemetryDefaults adds the default Prometheus reader to service.telemetry.metrics.
func applyTelemetryDefaults(out map[string]any, opts DefaultOptions) {
	svc, ok := objectOrEmpty(out["service"])
	if !ok {
		return
	}
	tel, ok := objectOrEmpty(svc["telemetry"])
	if !ok {
		return
	}
	metrics, ok := objectOrEmpty(tel["metrics"])
	if !ok {
		return
	}
	addr, ok := stringOrEmpty(metrics["address"])
	if !ok || addr != "" {
		return
	}
	if rv := metrics["readers"]; rv != nil {
		l, ok := asList(rv)
		if !ok || len(l) > 0 {
			return
		}
	}
	prom := map[string]any{"host": DefaultMetricsHost, "port": DefaultMetricsPort}
	if opts.LegacyTelemetryShape {
		prom["without_scope_info"] = false
		prom["without_type_suffix"] = false
		prom["without_units"] = false
	}
	metrics["readers"] = []any{map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": prom}}}}
	tel["metrics"] = metrics
	svc["telemetry"] = tel
	out["service"] = svc
}

// MetricsEndpoint returns the host and port the collector serves its own metrics on, read from
// service.telemetry.metrics the way upstream does: a legacy address (when there are no readers),
// else the first pull Prometheus reader, else 0.0.0.0:8888. It fails when the port cannot be known:
// an address whose port is an ${...} reference, or a reader port outside 1-65535.
func MetricsEndpoint(c *Config) (host string, port int32, err error) {
	metrics := getMap(c.Telemetry(), "metrics")
	readers, _ := asList(metrics["readers"])
	if addr := getString(metrics, "address"); addr != "" && len(readers) == 0 {
		return metricsAddress(addr)
	}
	for _, r := range readers {
		prom := getMap(getMap(getMap(asMapOrNil(r), "pull"), "exporter"), "prometheus")
		if prom == nil {
			continue
		}
		host = getString(prom, "host")
		if host == "" {
			host = DefaultMetricsHost
		}
		port = DefaultMetricsPort
		if n, ok := number(prom["port"]); ok && n != 0 {
			if n < 0 || n > 65535 || n != float64(int64(n)) {
				return "", 0, fmt.Errorf("service.telemetry.metrics.readers: prometheus port %v must be between 1 and 65535", prom["port"])
			}
			port = int32(n)
		}
		return host, port, nil
	}
	return DefaultMetricsHost, DefaultMetricsPort, nil
}

// metricsAddress splits a legacy metrics address; a missing port means 8888.
func metricsAddress(addr string) (string, int32, error) {
	if strings.Contains(addr, ":${") && strings.HasSuffix(addr, "}") {
		return "", 0, fmt.Errorf("service.telemetry.metrics.address: cannot determine the metrics port of %q", addr)
	}
	i := strings.LastIndex(addr, ":")
	if i < 0 || i == len(addr)-1 || strings.Trim(addr[i+1:], "0123456789") != "" {
		return addr, DefaultMetricsPort, nil
	}
	n, err := strconv.ParseUint(addr[i+1:], 10, 32)
	if err != nil || n == 0 || n > 65535 {
		return "", 0, fmt.Errorf("service.telemetry.metrics.address: port %q must be between 1 and 65535", addr[i+1:])
	}
	return addr[:i], int32(n), nil //nolint:gosec // n is at most 65535.
}

// number returns v as a float64 when it is any numeric type.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}
