package collector

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// Container returns the otc-container of otelcol. withConfig adds --config=/conf/collector.yaml and
// the /conf mount of the ConfigMap, as in the operator's own workloads and in sidecars of the
// collector's namespace; the sidecar injector passes false when it supplies the config itself.
func Container(otelcol v1beta1.OpenTelemetryCollector, opts Options, withConfig bool) corev1.Container {
	s := &state{col: &otelcol, opts: opts}
	s.raw = RawConfig(otelcol.Spec.Config)
	s.cfg = collectorconfig.Parse(s.raw)
	s.ports = collectorconfig.InferPorts(s.cfg)
	return s.container(withConfig)
}

func (s *state) container(withConfig bool) corev1.Container {
	spec := &s.col.Spec
	image := spec.Image
	if image == "" {
		image = s.opts.CollectorImage
	}
	var args []string
	if withConfig {
		args = append(args, "--config=/conf/"+naming.ConfigMapKey)
	}
	userArgs := make([]string, 0, len(spec.Args))
	for k, v := range spec.Args {
		if withConfig && k == "config" {
			continue // the operator owns --config
		}
		userArgs = append(userArgs, "--"+k+"="+v)
	}
	sort.Strings(userArgs)
	args = append(args, userArgs...)

	probes := collectorconfig.HealthProbes(s.cfg)
	return corev1.Container{
		Name:            naming.Container,
		Image:           image,
		ImagePullPolicy: spec.ImagePullPolicy,
		Command:         slices.Clone(spec.Command),
		Args:            args,
		Ports:           s.containerPorts(),
		EnvFrom:         spec.EnvFrom,
		Env:             s.env(),
		Resources:       spec.Resources,
		VolumeMounts:    s.volumeMounts(withConfig),
		LivenessProbe:   tuneProbe(probes.Liveness, spec.LivenessProbe),
		ReadinessProbe:  tuneProbe(probes.Readiness, spec.ReadinessProbe),
		StartupProbe:    tuneProbe(probes.Startup, spec.StartupProbe),
		Lifecycle:       spec.Lifecycle,
		SecurityContext: spec.SecurityContext,
	}
}

// containerPorts are the ports of every used receiver, exporter and extension plus "metrics" (the
// collector's own telemetry), merged with spec.ports (which win), sorted by name.
func (s *state) containerPorts() []corev1.ContainerPort {
	inferred := make([]corev1.ServicePort, 0, len(s.ports.Service)+len(s.ports.Extension)+1)
	inferred = append(inferred, s.ports.Service...)
	inferred = append(inferred, s.ports.Extension...)
	sort.SliceStable(inferred, func(i, j int) bool { return inferred[i].Name < inferred[j].Name })
	inferred = append(inferred, corev1.ServicePort{Name: "metrics", Port: s.metricsPort(), Protocol: corev1.ProtocolTCP})

	merged, _ := collectorconfig.MergePorts(userServicePorts(s.col.Spec.Ports), inferred)
	out := make([]corev1.ContainerPort, len(merged))
	for i, p := range merged {
		out[i] = corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: p.Protocol}
		if i < len(s.col.Spec.Ports) {
			out[i].HostPort = s.col.Spec.Ports[i].HostPort
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// metricsPort is the port of the collector's own metrics; 8888 when the config does not tell.
func (s *state) metricsPort() int32 {
	_, port, err := collectorconfig.MetricsEndpoint(s.cfg)
	if err != nil || port == 0 {
		return collectorconfig.DefaultMetricsPort
	}
	return port
}

// env is spec.env, then what the operator adds (POD_NAME, SHARD with a target allocator,
// GOMEMLIMIT and GOMAXPROCS, the components' variables, the proxy variables) unless spec.env
// already names it.
func (s *state) env() []corev1.EnvVar {
	spec := &s.col.Spec
	user := make(map[string]bool, len(spec.Env))
	out := make([]corev1.EnvVar, 0, len(spec.Env)+8)
	for _, e := range spec.Env {
		user[e.Name] = true
		out = append(out, e)
	}
	add := func(e corev1.EnvVar) {
		if !user[e.Name] {
			out = append(out, e)
		}
	}
	add(corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"},
	}})
	if spec.TargetAllocator.Enabled {
		add(corev1.EnvVar{Name: "SHARD", Value: "0"})
	}
	if s.opts.SetGolangFlags {
		for _, v := range [][2]string{{"GOMEMLIMIT", "limits.memory"}, {"GOMAXPROCS", "limits.cpu"}} {
			add(corev1.EnvVar{Name: v[0], ValueFrom: &corev1.EnvVarSource{
				ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: v[1], ContainerName: naming.Container},
			}})
		}
	}
	for _, e := range collectorconfig.EnvVars(s.cfg) {
		add(e)
	}
	for _, e := range s.opts.ProxyEnv {
		add(e)
	}
	return out
}

// tuneProbe applies the CR's probe timing to the handler the config provides.
func tuneProbe(p *corev1.Probe, t *v1beta1.Probe) *corev1.Probe {
	if p == nil || t == nil {
		return p
	}
	if t.InitialDelaySeconds != nil {
		p.InitialDelaySeconds = *t.InitialDelaySeconds
	}
	if t.PeriodSeconds != nil {
		p.PeriodSeconds = *t.PeriodSeconds
	}
	if t.FailureThreshold != nil {
		p.FailureThreshold = *t.FailureThreshold
	}
	if t.SuccessThreshold != nil {
		p.SuccessThreshold = *t.SuccessThreshold
	}
	if t.TimeoutSeconds != nil {
		p.TimeoutSeconds = *t.TimeoutSeconds
	}
	p.TerminationGracePeriodSeconds = t.TerminationGracePeriodSeconds
	return p
}

func userServicePorts(ports []v1beta1.PortsSpec) []corev1.ServicePort {
	if len(ports) == 0 {
		return nil
	}
	out := make([]corev1.ServicePort, len(ports))
	for i, p := range ports {
		out[i] = p.ServicePort
	}
	return out
}

// isGRPC reports whether a Service port speaks gRPC by its appProtocol.
func isGRPC(p corev1.ServicePort) bool {
	return p.AppProtocol != nil && (strings.EqualFold(*p.AppProtocol, "grpc") || *p.AppProtocol == "h2c")
}
