package targetallocator

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// deployment runs the target allocator. configHash goes into the pod template, so that a
// configuration change rolls the pod (the target allocator reads its file at start).
func (s *state) deployment(configHash string) *appsv1.Deployment {
	spec := s.ta.Spec
	name := Name(s.ta.Name)
	dnsConfig := spec.PodDNSConfig
	shareProcessNamespace := spec.ShareProcessNamespace
	containers := make([]corev1.Container, 0, len(spec.AdditionalContainers)+1)
	containers = append(containers, spec.AdditionalContainers...)
	containers = append(containers, s.container())
	meta := s.meta(name)
	meta.Annotations = nil // upstream's Deployment carries none; its pod template does
	return &appsv1.Deployment{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(s.ta)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.labels(name), Annotations: s.podAnnotations(configHash)},
				Spec: corev1.PodSpec{
					ServiceAccountName:            ServiceAccountName(s.ta),
					InitContainers:                spec.InitContainers,
					Containers:                    containers,
					Volumes:                       s.volumes(),
					DNSPolicy:                     dnsPolicy(spec.DNSPolicy, spec.HostNetwork, spec.PodDNSConfig),
					DNSConfig:                     &dnsConfig,
					HostNetwork:                   spec.HostNetwork,
					ShareProcessNamespace:         &shareProcessNamespace,
					Tolerations:                   spec.Tolerations,
					NodeSelector:                  spec.NodeSelector,
					SecurityContext:               spec.PodSecurityContext,
					PriorityClassName:             spec.PriorityClassName,
					Affinity:                      spec.Affinity,
					TerminationGracePeriodSeconds: spec.TerminationGracePeriodSeconds,
					TopologySpreadConstraints:     spec.TopologySpreadConstraints,
				},
			},
		},
	}
}

// podAnnotations are spec.podAnnotations, then the resource's annotations (filtered; they win, as
// upstream), then the configuration hash unless configHash is empty. Upstream puts the same
// annotations on the pod template, the PodDisruptionBudget and (without the hash) the
// NetworkPolicy.
func (s *state) podAnnotations(configHash string) map[string]string {
	out := make(map[string]string, len(s.ta.Spec.PodAnnotations)+len(s.ta.Annotations)+1)
	for k, v := range s.ta.Spec.PodAnnotations {
		out[k] = v
	}
	for k, v := range s.ta.Annotations {
		if !s.annotationsFilter.Drops(k) {
			out[k] = v
		}
	}
	if configHash != "" {
		out[ConfigHashAnnotation] = configHash
	}
	return out
}

// dnsPolicy is spec.dnsPolicy when set; otherwise None when nameservers are configured,
// ClusterFirstWithHostNet on the host network and ClusterFirst else.
func dnsPolicy(set *corev1.DNSPolicy, hostNetwork bool, cfg corev1.PodDNSConfig) corev1.DNSPolicy {
	if set != nil && *set != "" {
		return *set
	}
	return manifestutils.DNSPolicy(hostNetwork, cfg)
}

// containerPorts are http (8080), https (8443) with mutual TLS, and then spec.ports, in upstream's order.
func (s *state) containerPorts() []corev1.ContainerPort {
	ports := make([]corev1.ContainerPort, 0, len(s.ta.Spec.Ports)+1)
	ports = append(ports, corev1.ContainerPort{Name: HTTPPortName, ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP})
	if s.mtls() {
		ports = append(ports, httpsContainerPort())
	}
	for _, p := range s.ta.Spec.Ports {
		ports = append(ports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: p.Protocol, HostPort: p.HostPort})
	}
	return ports
}

// Args are the container's flags: spec.args as sorted --key=value. The configuration file is read
// from its default path.
func Args(args map[string]string) []string {
	out := make([]string, 0, len(args))
	for k, v := range args {
		out = append(out, fmt.Sprintf("--%s=%s", k, v))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// container is ta-container: the ConfigMap at /conf, spec.volumeMounts after it, spec.env then
// OTELCOL_NAMESPACE (unless set), GOMEMLIMIT/GOMAXPROCS and the operator's proxy variables, as
// upstream; the http port and the /livez and /readyz probes.
func (s *state) container() corev1.Container {
	spec := s.ta.Spec
	mounts := make([]corev1.VolumeMount, 0, len(spec.VolumeMounts)+1)
	mounts = append(mounts, corev1.VolumeMount{Name: ConfigMapVolume, MountPath: ConfigMountPath})
	if s.mtls() {
		mounts = append(mounts, s.serverCertMount())
	}
	mounts = append(mounts, spec.VolumeMounts...)
	env := manifestutils.ComponentEnv(spec.Env, NamespaceEnv, s.opts.SetGolangFlags, ContainerName, s.opts.ProxyEnv)
	return corev1.Container{
		Name:            ContainerName,
		Image:           Image(s.ta, s.opts),
		ImagePullPolicy: spec.ImagePullPolicy,
		Args:            Args(spec.Args),
		Ports:           s.containerPorts(),
		Env:             env,
		EnvFrom:         spec.EnvFrom,
		VolumeMounts:    mounts,
		Resources:       spec.Resources,
		SecurityContext: spec.SecurityContext,
		LivenessProbe:   probe(spec.LivenessProbe, "/livez"),
		ReadinessProbe:  probe(spec.ReadinessProbe, "/readyz"),
		Lifecycle:       spec.Lifecycle,
	}
}

// probe is an HTTP GET of path on 8080. A user probe with its own handler replaces it; a user probe
// without a handler only tunes it (delays, periods, thresholds).
func probe(user *corev1.Probe, path string) *corev1.Probe {
	if user != nil && (user.HTTPGet != nil || user.TCPSocket != nil || user.Exec != nil || user.GRPC != nil) {
		return user.DeepCopy()
	}
	p := &corev1.Probe{}
	if user != nil {
		p = user.DeepCopy()
	}
	p.HTTPGet = &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(HTTPPort)}
	return p
}

// volumes mounts the ConfigMap's targetallocator.yaml, the serving certificate Secret with mutual
// TLS, then spec.volumes.
func (s *state) volumes() []corev1.Volume {
	vols := make([]corev1.Volume, 0, len(s.ta.Spec.Volumes)+1)
	vols = append(vols, corev1.Volume{
		Name: ConfigMapVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: Name(s.ta.Name)},
			Items:                []corev1.KeyToPath{{Key: ConfigMapKey, Path: ConfigMapKey}},
		}},
	})
	if s.mtls() {
		vols = append(vols, s.serverCertVolume())
	}
	return append(vols, s.ta.Spec.Volumes...)
}
