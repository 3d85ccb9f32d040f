package opampbridge

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// LeaderElection reports whether the bridge runs with leader election: whenever it has more than
// one replica, so that only one of them connects to the OpAMP server and applies configuration.
func LeaderElection(bridge v1alpha1.OpAMPBridge) bool {
	return bridge.Spec.Replicas != nil && *bridge.Spec.Replicas > 1
}

// Args are the bridge's command-line flags: its name (the value of the
// opentelemetry.io/opamp-managed label it manages), the heartbeat interval and, with several
// replicas, leader election. The configuration file is read from its default path.
func Args(bridge v1alpha1.OpAMPBridge, opts Options) []string {
	hb := opts.HeartbeatInterval
	if hb < 0 {
		hb = DefaultHeartbeatInterval
	}
	args := []string{"--name=" + bridge.Name, "--heartbeat-interval=" + hb.String()}
	if LeaderElection(bridge) {
		args = append(args, "--leader-elect")
	}
	return args
}

// deployment runs the bridge. configHash goes into the pod template, so that a configuration
// change rolls the pod (the bridge reads its file once, at start).
func (s *state) deployment(configHash string) *appsv1.Deployment {
	spec := s.bridge.Spec
	m := s.meta()
	m.Annotations[ConfigHashAnnotation] = configHash
	podAnnotations := manifestutils.Annotations(spec.PodAnnotations, s.annotationsFilter)
	for k, v := range s.bridge.Annotations {
		if _, ok := podAnnotations[k]; !ok && !s.annotationsFilter.Drops(k) {
			podAnnotations[k] = v
		}
	}
	podAnnotations[ConfigHashAnnotation] = configHash
	dnsConfig := spec.PodDNSConfig
	return &appsv1.Deployment{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "Deployment"),
		ObjectMeta: m,
		Spec: appsv1.DeploymentSpec{
			Replicas: spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(s.bridge)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.labels(), Annotations: podAnnotations},
				Spec: corev1.PodSpec{
					ServiceAccountName:        ServiceAccountName(s.bridge),
					Containers:                []corev1.Container{s.container()},
					Volumes:                   s.volumes(),
					DNSPolicy:                 manifestutils.DNSPolicy(spec.HostNetwork, spec.PodDNSConfig),
					DNSConfig:                 &dnsConfig,
					HostNetwork:               spec.HostNetwork,
					Tolerations:               spec.Tolerations,
					NodeSelector:              spec.NodeSelector,
					SecurityContext:           spec.PodSecurityContext,
					PriorityClassName:         spec.PriorityClassName,
					Affinity:                  spec.Affinity,
					TopologySpreadConstraints: spec.TopologySpreadConstraints,
				},
			},
		},
	}
}

// container is opamp-bridge-container: the ConfigMap at /conf, spec.volumeMounts after it,
// spec.env then OTELCOL_NAMESPACE (unless set), GOMEMLIMIT/GOMAXPROCS and the operator's proxy
// variables, as upstream; plus the OpAMP and health ports and /healthz probes.
func (s *state) container() corev1.Container {
	spec := s.bridge.Spec
	mounts := []corev1.VolumeMount{{Name: ConfigMapVolume, MountPath: ConfigMountPath}}
	if ps := spec.ProxyServer; ps != nil && ps.TLSSecretName != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: ProxyTLSVolume, MountPath: ProxyTLSMountPath, ReadOnly: true})
	}
	if ps := spec.ProxyServer; ps != nil && ps.BearerTokenSecret != nil {
		mounts = append(mounts, corev1.VolumeMount{Name: ProxyTokenVolume, MountPath: ProxyTokenMountPath, ReadOnly: true})
	}
	mounts = append(mounts, spec.VolumeMounts...)
	env := manifestutils.ComponentEnv(spec.Env, NamespaceEnv, s.opts.SetGolangFlags, ContainerName, s.opts.ProxyEnv)
	probe := func(path string, initialDelay int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString(HealthPortName),
			}},
			InitialDelaySeconds: initialDelay,
		}
	}
	// With leader election /readyz: every synced replica is ready, leader or standby, so that the
	// default RollingUpdate can finish (with only the leader ready, the surge pod of a 2-replica
	// rollout never was, issue 31 finding 2); a standby's proxy answers 503 with Retry-After and the
	// collector's opamp extension retries until it reaches the leader. A single replica keeps
	// upstream's /healthz.
	readyPath := "/healthz"
	if LeaderElection(s.bridge) {
		readyPath = "/readyz"
	}
	return corev1.Container{
		Name:            ContainerName,
		Image:           Image(s.bridge, s.opts),
		ImagePullPolicy: spec.ImagePullPolicy,
		Args:            Args(s.bridge, s.opts),
		Ports: []corev1.ContainerPort{
			{Name: OpAMPPortName, ContainerPort: OpAMPPort, Protocol: corev1.ProtocolTCP},
			{Name: HealthPortName, ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP},
		},
		Env:             env,
		EnvFrom:         spec.EnvFrom,
		VolumeMounts:    mounts,
		Resources:       spec.Resources,
		SecurityContext: spec.SecurityContext,
		LivenessProbe:   probe("/healthz", 15),
		ReadinessProbe:  probe(readyPath, 5),
	}
}

// volumes mounts the ConfigMap's remoteconfiguration.yaml, the proxy's TLS and token Secrets
// when spec.proxyServer names them, then spec.volumes.
func (s *state) volumes() []corev1.Volume {
	vols := []corev1.Volume{{
		Name: ConfigMapVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: Name(s.bridge.Name)},
			Items:                []corev1.KeyToPath{{Key: ConfigMapKey, Path: ConfigMapKey}},
		}},
	}}
	if ps := s.bridge.Spec.ProxyServer; ps != nil && ps.TLSSecretName != "" {
		vols = append(vols, corev1.Volume{Name: ProxyTLSVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: ps.TLSSecretName,
			Items:      []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey}, {Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}},
		}}})
	}
	if ps := s.bridge.Spec.ProxyServer; ps != nil && ps.BearerTokenSecret != nil {
		vols = append(vols, corev1.Volume{Name: ProxyTokenVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: ps.BearerTokenSecret.Name,
			Items:      []corev1.KeyToPath{{Key: ps.BearerTokenSecret.Key, Path: "token"}},
		}}})
	}
	return append(vols, s.bridge.Spec.Volumes...)
}

// HashOf returns the configuration hash the Deployment's pod template carries for bridge.
func HashOf(bridge v1alpha1.OpAMPBridge) (string, error) {
	data, err := ConfigFile(bridge)
	if err != nil {
		return "", err
	}
	return configHash(&corev1.ConfigMap{Data: map[string]string{ConfigMapKey: string(data)}}), nil
}
