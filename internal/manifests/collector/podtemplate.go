package collector

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// podTemplate is the pod template shared by the three workload kinds. The additional containers
// come before otc-container, as upstream orders them.
func (s *state) podTemplate() corev1.PodTemplateSpec {
	spec := &s.col.Spec
	containers := make([]corev1.Container, 0, len(spec.AdditionalContainers)+1)
	containers = append(containers, spec.AdditionalContainers...)
	containers = append(containers, s.container(true))
	shareProcessNamespace := spec.ShareProcessNamespace
	dnsConfig := spec.PodDNSConfig
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels: s.labels(naming.Collector(s.col.Name), true),
			Annotations: manifestutils.PodAnnotations(spec.PodAnnotations, s.col.Annotations, s.annotationsFilter,
				!spec.Observability.Metrics.DisablePrometheusAnnotations, s.hash),
		},
		Spec: corev1.PodSpec{
			ServiceAccountName:            s.serviceAccountName(),
			InitContainers:                spec.InitContainers,
			Containers:                    containers,
			Volumes:                       s.volumes(),
			DNSPolicy:                     dnsPolicy(spec.HostNetwork, spec.PodDNSConfig, spec.DNSPolicy),
			DNSConfig:                     &dnsConfig,
			HostNetwork:                   spec.HostNetwork,
			HostPID:                       spec.HostPID,
			HostUsers:                     spec.HostUsers,
			HostAliases:                   spec.HostAliases,
			ShareProcessNamespace:         &shareProcessNamespace,
			Tolerations:                   spec.Tolerations,
			NodeSelector:                  spec.NodeSelector,
			SecurityContext:               spec.PodSecurityContext,
			PriorityClassName:             spec.PriorityClassName,
			Affinity:                      spec.Affinity,
			TerminationGracePeriodSeconds: spec.TerminationGracePeriodSeconds,
			TopologySpreadConstraints:     spec.TopologySpreadConstraints,
		},
	}
}

// dnsPolicy is spec.dnsPolicy, else None when nameservers are configured, else
// ClusterFirstWithHostNet on the host network, else ClusterFirst.
func dnsPolicy(hostNetwork bool, cfg corev1.PodDNSConfig, explicit *corev1.DNSPolicy) corev1.DNSPolicy {
	if explicit != nil {
		return *explicit
	}
	return manifestutils.DNSPolicy(hostNetwork, cfg)
}

// desiredReplicas is spec.replicas, raised to autoscaler.minReplicas.
func (s *state) desiredReplicas() *int32 {
	spec := &s.col.Spec
	if spec.Autoscaler != nil && spec.Autoscaler.MinReplicas != nil {
		if spec.Replicas != nil {
			r := max(*spec.Autoscaler.MinReplicas, *spec.Replicas)
			return &r
		}
		r := *spec.Autoscaler.MinReplicas
		return &r
	}
	if spec.Replicas == nil {
		return nil
	}
	r := *spec.Replicas
	return &r
}
