// Package naming holds the names of the objects the operator generates for a collector. They are
// part of the compatibility contract with the upstream OpenTelemetry Operator: tools and users look
// objects up by these names, so each one is truncated to 63 characters and made DNS-safe the same
// way upstream does.
package naming

import (
	"fmt"
	"strings"
)

// maxName is the longest name the generated objects get (a DNS-1123 label).
const maxName = 63

// Container is the name of the collector container in the pod.
const Container = "otc-container"

// ConfigMapVolume is the name of the pod volume that mounts the collector ConfigMap.
const ConfigMapVolume = "otc-internal"

// ConfigMapKey is the key of the collector configuration in its ConfigMap.
const ConfigMapKey = "collector.yaml"

// Collector returns "<name>-collector", the name of the workload, ServiceAccount, PDB and HPA.
func Collector(name string) string { return DNSName(Truncate("%s-collector", maxName, name)) }

// ConfigMap returns "<name>-collector-<first 8 characters of hash>".
func ConfigMap(name, hash string) string {
	if len(hash) > 8 {
		hash = hash[:8]
	}
	return DNSName(Truncate("%s-collector-%s", maxName, name, hash))
}

// ConfigMapExtra returns the volume name of an extra ConfigMap listed in spec.configmaps.
func ConfigMapExtra(configMap string) string {
	return DNSName(Truncate("configmap-%s", maxName, configMap))
}

// Service returns "<name>-collector", the Service of receiver and exporter ports.
func Service(name string) string { return DNSName(Truncate("%s-collector", maxName, name)) }

// HeadlessService returns "<name>-collector-headless".
func HeadlessService(name string) string {
	return DNSName(Truncate("%s-headless", maxName, Service(name)))
}

// MonitoringService returns "<name>-collector-monitoring".
func MonitoringService(name string) string {
	return DNSName(Truncate("%s-monitoring", maxName, Service(name)))
}

// ExtensionService returns "<name>-collector-extension".
func ExtensionService(name string) string {
	return DNSName(Truncate("%s-extension", maxName, Service(name)))
}

// Ingress returns "<name>-ingress".
func Ingress(name string) string { return DNSName(Truncate("%s-ingress", maxName, name)) }

// Route returns "<port>-<name>-route", the OpenShift Route of one port.
func Route(name, port string) string {
	return DNSName(Truncate("%s-%s-route", maxName, port, name))
}

// HTTPRoute returns "<name>-<port>-httproute", the Gateway API HTTPRoute of one port.
func HTTPRoute(name, port string) string {
	return DNSName(Truncate("%s-%s-httproute", maxName, name, port))
}

// NetworkPolicy returns "<name>-collector-networkpolicy".
func NetworkPolicy(name string) string {
	return DNSName(Truncate("%s-collector-networkpolicy", maxName, name))
}

// ClusterRole returns "<name>-<namespace>-cluster-role".
func ClusterRole(name, namespace string) string {
	return DNSName(Truncate("%s-%s-cluster-role", maxName, name, namespace))
}

// ClusterRoleBinding returns "<name>-<namespace>-collector".
func ClusterRoleBinding(name, namespace string) string {
	return DNSName(Truncate("%s-%s-collector", maxName, name, namespace))
}

// ServiceMonitor returns "<name>-collector"; the monitoring ServiceMonitor passes
// "<name>-monitoring" as name.
func ServiceMonitor(name string) string { return DNSName(Truncate("%s-collector", maxName, name)) }

// PodMonitor returns "<name>-collector".
func PodMonitor(name string) string { return DNSName(Truncate("%s-collector", maxName, name)) }

// TargetAllocator returns "<name>-targetallocator", the target allocator's workload and Service.
func TargetAllocator(name string) string {
	return DNSName(Truncate("%s-targetallocator", maxName, name))
}

// TAClientCertificate returns "<name>-ta-client-cert", the volume and Secret of the collector's
// client certificate for mTLS with the target allocator.
func TAClientCertificate(name string) string {
	return DNSName(Truncate("%s-ta-client-cert", maxName, name))
}

// Instance returns "<namespace>.<name>", the value of the app.kubernetes.io/instance label.
func Instance(namespace, name string) string {
	return Truncate("%s.%s", maxName, namespace, name)
}

// Truncate formats values with format and shortens the result to max characters: the string
// values are shortened first, from the first one on, then the result is cut; leading and trailing
// characters that are not ASCII letters or digits are removed.
func Truncate(format string, max int, values ...any) string {
	result := fmt.Sprintf(format, values...)
	if excess := len(result) - max; excess > 0 {
		shortened := make([]any, len(values))
		for i, v := range values {
			if s, ok := v.(string); ok && excess > 0 {
				if len(s) > excess {
					v = s[:len(s)-excess]
					excess = 0
				} else {
					v = ""
					excess -= len(s)
				}
			}
			shortened[i] = v
		}
		result = fmt.Sprintf(format, shortened...)
	}
	if len(result) > max {
		return result[:max]
	}
	return strings.TrimFunc(result, func(r rune) bool { return !isAlnum(r) })
}

// DNSName lowercases name and replaces every character that is not a letter or digit by '-', or by
// 'a' when it is the first or the last character.
func DNSName(name string) string {
	lower := strings.ToLower(name)
	runes := []rune(lower)
	out := make([]rune, len(runes))
	for i, r := range runes {
		switch {
		case (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			out[i] = r
		case i == 0 || i == len(runes)-1:
			out[i] = 'a'
		default:
			out[i] = '-'
		}
	}
	return string(out)
}

func isAlnum(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}
