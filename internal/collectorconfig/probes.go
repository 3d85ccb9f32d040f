package collectorconfig

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	defaultHealthCheckPort int32 = 13133
	defaultHealthCheckPath       = "/"
)

// Probes are the container probes a config provides.
type Probes struct {
	// Liveness, Readiness and Startup are nil when no used extension provides a probe.
	Liveness, Readiness, Startup *corev1.Probe
}

// HealthProbes returns the liveness, readiness and startup probes of the first used health_check
// extension (by id): an HTTP GET on the port of its endpoint (default 13133) and its path (default
// "/"). Only the handler is set; timing comes from the CR. All three are nil when no health_check
// extension is listed in service.extensions.
func HealthProbes(c *Config) Probes {
	for _, comp := range c.UsedComponents(KindExtension) {
		if !specFor(KindExtension, comp.Type).healthCheck {
			continue
		}
		cfg := comp.configMap()
		port := defaultHealthCheckPort
		if addr, _ := listenAddress(cfg, nil); addr != "" {
			if p, found, err := endpointPort(addr); err == nil && found {
				port = p
			}
		}
		path := getString(cfg, "path")
		if path == "" {
			path = defaultHealthCheckPath
		}
		probe := func() *corev1.Probe {
			return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromInt32(port)}}}
		}
		return Probes{Liveness: probe(), Readiness: probe(), Startup: probe()}
	}
	return Probes{}
}
