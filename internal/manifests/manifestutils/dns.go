package manifestutils

import corev1 "k8s.io/api/core/v1"

// DNSPolicy is the pod DNS policy of a generated workload whose spec sets none: None when
// nameservers are configured (podDnsConfig), ClusterFirstWithHostNet on the host network, else
// ClusterFirst.
func DNSPolicy(hostNetwork bool, cfg corev1.PodDNSConfig) corev1.DNSPolicy {
	switch {
	case cfg.Nameservers != nil:
		return corev1.DNSNone
	case hostNetwork:
		return corev1.DNSClusterFirstWithHostNet
	default:
		return corev1.DNSClusterFirst
	}
}
