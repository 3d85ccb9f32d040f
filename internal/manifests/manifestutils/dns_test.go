package manifestutils

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDNSPolicy(t *testing.T) {
	withNameservers := corev1.PodDNSConfig{Nameservers: []string{"10.0.0.10"}}
	for _, tc := range []struct {
		hostNetwork bool
		cfg         corev1.PodDNSConfig
		want        corev1.DNSPolicy
	}{
		{false, corev1.PodDNSConfig{}, corev1.DNSClusterFirst},
		{true, corev1.PodDNSConfig{}, corev1.DNSClusterFirstWithHostNet},
		{true, withNameservers, corev1.DNSNone},
		{false, withNameservers, corev1.DNSNone},
	} {
		if got := DNSPolicy(tc.hostNetwork, tc.cfg); got != tc.want {
			t.Errorf("DNSPolicy(%v, %v) = %s, want %s", tc.hostNetwork, tc.cfg, got, tc.want)
		}
	}
}
