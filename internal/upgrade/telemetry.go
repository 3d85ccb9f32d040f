package upgrade

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
)

const metricsField = "spec.config.service.telemetry.metrics"

// defaultMetricsAddress is where collectors before 0.111.0 served their own metrics by default.
var defaultMetricsAddress = collectorconfig.DefaultMetricsHost + ":" + strconv.Itoa(int(collectorconfig.DefaultMetricsPort))

// telemetryMetrics returns service.telemetry.metrics as an object (nil when it is absent or null)
// and false when it has another shape, which the telemetry steps leave alone.
func telemetryMetrics(spec *v1beta1.OpenTelemetryCollectorSpec) (map[string]any, bool) {
	tel := spec.Config.Service.Telemetry
	if tel == nil || tel.Object["metrics"] == nil {
		return nil, true
	}
	m, ok := tel.Object["metrics"].(map[string]any)
	return m, ok
}

// setTelemetryMetrics stores metrics as service.telemetry.metrics, creating telemetry if needed.
func setTelemetryMetrics(spec *v1beta1.OpenTelemetryCollectorSpec, metrics map[string]any) {
	if spec.Config.Service.Telemetry == nil {
		spec.Config.Service.Telemetry = &v1beta1.AnyConfig{}
	}
	if spec.Config.Service.Telemetry.Object == nil {
		spec.Config.Service.Telemetry.Object = map[string]any{}
	}
	spec.Config.Service.Telemetry.Object["metrics"] = metrics
}

// explicitMetricsAddress is upstream's 0.111.0 step: collector 0.111.0 moved its own metrics from
// 0.0.0.0:8888 to localhost:8888 by default, so a collector that relied on the default gets the old
// address written out, and the monitoring Service and ServiceMonitor keep reaching it.
//
// Unlike upstream, a collector that already has readers is left alone: upstream also writes an
// address there, which its 0.122.0 step then turns into a second reader on the same port.
func explicitMetricsAddress(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	metrics, ok := telemetryMetrics(spec)
	if !ok {
		return nil
	}
	if addr, present := metrics["address"]; present && addr != nil && addr != "" {
		return nil
	}
	if r, present := metrics["readers"]; present && r != nil {
		if l, isList := r.([]any); !isList || len(l) > 0 {
			return nil
		}
	}
	updated := make(map[string]any, len(metrics)+1)
	for k, val := range metrics {
		updated[k] = val
	}
	updated["address"] = defaultMetricsAddress
	setTelemetryMetrics(spec, updated)
	return []Change{{Version: "0.111.0", Field: metricsField + ".address", Message: "set to " + defaultMetricsAddress +
		": collectors from 0.111.0 serve their own metrics on localhost by default, out of the operator's reach"}}
}

// metricsAddressToReader is upstream's 0.122.0 step: collectors from 0.123.0 ignore
// service.telemetry.metrics.address, so it is replaced by the equivalent pull Prometheus reader.
// Before 0.123.0 the collector served the address in addition to the readers, so the reader is
// appended to the existing ones (unless one with the same endpoint is already there).
//
// Upstream round-trips the whole telemetry section through a typed struct, losing keys it does not
// model, and fails on an address whose port is an ${env:...} reference. Here only address and
// readers are touched, such a port is carried over as it is, and an address that cannot be split
// stays (with a notice) rather than failing the migration.
func metricsAddressToReader(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	metrics, ok := telemetryMetrics(spec)
	if !ok {
		return nil
	}
	addr, _ := metrics["address"].(string)
	if addr == "" {
		return nil
	}
	readers, isList := metrics["readers"].([]any)
	if !isList && metrics["readers"] != nil {
		return []Change{{Version: "0.122.0", Message: fmt.Sprintf("%s.address %q could not be moved to readers, "+
			"which is not a list; collectors from 0.123.0 ignore the address, so replace it with a reader", metricsField, addr)}}
	}
	host, port, ok := splitMetricsAddress(addr)
	if !ok {
		return []Change{{Version: "0.122.0", Message: fmt.Sprintf("%s.address %q has no usable port; collectors "+
			"from 0.123.0 ignore it, so replace it with a pull Prometheus reader", metricsField, addr)}}
	}
	updated := make(map[string]any, len(metrics))
	for k, val := range metrics {
		if k != "address" {
			updated[k] = val
		}
	}
	endpoint := fmt.Sprintf("%s:%v", host, port)
	msg := fmt.Sprintf("replaced address %q, which collectors from 0.123.0 ignore, with a pull Prometheus reader on %s", addr, endpoint)
	if hasPrometheusReader(readers, host, port) {
		msg = fmt.Sprintf("removed address %q, which collectors from 0.123.0 ignore; a reader on %s already exists", addr, endpoint)
	} else {
		reader := map[string]any{"pull": map[string]any{"exporter": map[string]any{
			"prometheus": map[string]any{"host": host, "port": port},
		}}}
		updated["readers"] = append(append(make([]any, 0, len(readers)+1), readers...), reader)
	}
	setTelemetryMetrics(spec, updated)
	return []Change{{Version: "0.122.0", Field: metricsField, Message: msg}}
}

// splitMetricsAddress splits a legacy metrics address into the host and port of a Prometheus
// reader. The port is a float64 (as decoded JSON numbers are) or, when it is an ${...} reference,
// the reference itself. An address without a port gets 8888, as upstream assumes; brackets around
// an IPv6 host are dropped. It returns false for a port that is neither.
func splitMetricsAddress(addr string) (host string, port any, ok bool) {
	sep := lastTopLevelColon(addr)
	if sep < 0 {
		return addr, float64(collectorconfig.DefaultMetricsPort), true
	}
	host, p := addr[:sep], addr[sep+1:]
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	if n, err := strconv.ParseUint(p, 10, 16); err == nil && n > 0 {
		return host, float64(n), true
	}
	if strings.HasPrefix(p, "${") && strings.HasSuffix(p, "}") && strings.Count(p, "}") == 1 {
		return host, p, true
	}
	return "", nil, false
}

// lastTopLevelColon returns the index of the last ':' outside ${...} references and outside an
// IPv6 host's brackets, or -1.
func lastTopLevelColon(s string) int {
	last, depth, bracket := -1, 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}' && depth > 0:
			depth--
		case s[i] == '[' && depth == 0:
			bracket = true
		case s[i] == ']' && depth == 0:
			bracket = false
		case s[i] == ':' && depth == 0 && !bracket:
			last = i
		}
	}
	return last
}

// hasPrometheusReader reports whether readers already holds a pull Prometheus reader on host:port.
func hasPrometheusReader(readers []any, host string, port any) bool {
	for _, r := range readers {
		prom := dig(r, "pull", "exporter", "prometheus")
		if prom == nil {
			continue
		}
		h, _ := prom["host"].(string)
		if h == host && samePort(prom["port"], port) {
			return true
		}
	}
	return false
}

// dig follows keys through nested objects and returns the object at the end, or nil.
func dig(v any, keys ...string) map[string]any {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		if m == nil {
			return nil
		}
		m, _ = m[k].(map[string]any)
	}
	return m
}

// samePort compares a port read from a reader with one produced by splitMetricsAddress, whatever
// numeric type the reader's port has.
func samePort(got, want any) bool {
	if ws, ok := want.(string); ok {
		gs, _ := got.(string)
		return gs == ws
	}
	wf, _ := want.(float64)
	switch g := got.(type) {
	case float64:
		return g == wf
	case int:
		return float64(g) == wf
	case int32:
		return float64(g) == wf
	case int64:
		return float64(g) == wf
	}
	return false
}
