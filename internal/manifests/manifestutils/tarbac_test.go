package manifestutils

import (
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

func rule(group string, verbs []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
}

// TestTargetAllocatorRBAC: which rules each discovery needs, and where they hold.
func TestTargetAllocatorRBAC(t *testing.T) {
	read := []string{"get", "list", "watch"}
	get := []string{"get"}
	sd := func(sd map[string]any) []v1beta1.AnyConfig {
		return []v1beta1.AnyConfig{{Object: map[string]any{"job_name": "j", "kubernetes_sd_configs": []any{sd}}}}
	}
	all := &metav1.LabelSelector{}
	tests := []struct {
		name                string
		spec                v1alpha1.TargetAllocatorSpec
		mtls                bool
		namespaced, cluster []rbacv1.PolicyRule
	}{{
		name:       "no discovery: the collectors' pods only",
		namespaced: []rbacv1.PolicyRule{rule("", read, "pods")},
	}, {
		name: "a user-named ServiceAccount: nothing (the user owns its RBAC)",
		spec: v1alpha1.TargetAllocatorSpec{OpenTelemetryCommonFields: v1beta1.OpenTelemetryCommonFields{ServiceAccount: "mine"}},
	}, {
		name:       "pod role in every namespace",
		spec:       v1alpha1.TargetAllocatorSpec{ScrapeConfigs: sd(map[string]any{"role": "pod"})},
		namespaced: nil,
		cluster:    []rbacv1.PolicyRule{rule("", read, "pods")},
	}, {
		name:       "service role limited by names to the own namespace",
		spec:       v1alpha1.TargetAllocatorSpec{ScrapeConfigs: sd(map[string]any{"role": "service", "namespaces": map[string]any{"names": []any{"obs"}}})},
		namespaced: []rbacv1.PolicyRule{rule("", read, "pods", "services")},
	}, {
		name:    "names listing another namespace: cluster-wide",
		spec:    v1alpha1.TargetAllocatorSpec{ScrapeConfigs: sd(map[string]any{"role": "endpoints", "namespaces": map[string]any{"own_namespace": true, "names": []any{"other"}}})},
		cluster: []rbacv1.PolicyRule{rule("", read, "endpoints", "pods", "services")},
	}, {
		name:       "attach_metadata.node adds nodes",
		spec:       v1alpha1.TargetAllocatorSpec{ScrapeConfigs: sd(map[string]any{"role": "pod", "namespaces": map[string]any{"own_namespace": true}, "attach_metadata": map[string]any{"node": true}})},
		namespaced: []rbacv1.PolicyRule{rule("", read, "pods")},
		cluster:    []rbacv1.PolicyRule{rule("", read, "nodes")},
	}, {
		name:       "ingress role, case-insensitive",
		spec:       v1alpha1.TargetAllocatorSpec{ScrapeConfigs: sd(map[string]any{"role": "Ingress", "namespaces": map[string]any{"own_namespace": true}})},
		namespaced: []rbacv1.PolicyRule{rule("", read, "pods"), rule("networking.k8s.io", read, "ingresses")},
	}, {
		name:       "another cluster's API server: nothing beyond the collectors' pods",
		spec:       v1alpha1.TargetAllocatorSpec{ScrapeConfigs: sd(map[string]any{"role": "node", "kubeconfig_file": "/k"})},
		namespaced: []rbacv1.PolicyRule{rule("", read, "pods")},
	}, {
		name:       "prometheusCR, null selectors: nothing watched",
		spec:       v1alpha1.TargetAllocatorSpec{PrometheusCR: v1beta1.TargetAllocatorPrometheusCR{Enabled: true}},
		namespaced: []rbacv1.PolicyRule{rule("", read, "pods")},
	}, {
		name: "prometheusCR PodMonitors of the own namespace, with mTLS: secrets get there",
		spec: v1alpha1.TargetAllocatorSpec{PrometheusCR: v1beta1.TargetAllocatorPrometheusCR{Enabled: true, PodMonitorSelector: all}},
		mtls: true,
		namespaced: []rbacv1.PolicyRule{rule("", get, "configmaps", "secrets"), rule("", read, "pods"),
			rule("monitoring.coreos.com", read, "podmonitors")},
	}, {
		name: "prometheusCR ScrapeConfigs of every namespace: nodes too, no secrets without mTLS",
		spec: v1alpha1.TargetAllocatorSpec{PrometheusCR: v1beta1.TargetAllocatorPrometheusCR{Enabled: true, ScrapeConfigSelector: all, ScrapeConfigNamespaceSelector: all}},
		cluster: []rbacv1.PolicyRule{rule("", get, "configmaps"), rule("", read, "endpoints", "nodes", "pods", "services"),
			rule("discovery.k8s.io", read, "endpointslices"), rule("monitoring.coreos.com", read, "scrapeconfigs"),
			rule("networking.k8s.io", read, "ingresses")},
	}, {
		name: "prometheusCR allow_namespaces only the own namespace: a Role",
		spec: v1alpha1.TargetAllocatorSpec{PrometheusCR: v1beta1.TargetAllocatorPrometheusCR{Enabled: true, ProbeSelector: all, ProbeNamespaceSelector: all, AllowNamespaces: []string{"obs"}}},
		namespaced: []rbacv1.PolicyRule{rule("", get, "configmaps"), rule("", read, "pods"),
			rule("monitoring.coreos.com", read, "probes"), rule("networking.k8s.io", read, "ingresses")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ta := v1alpha1.TargetAllocator{Spec: tc.spec}
			ta.Name, ta.Namespace = "ta", "obs"
			p, err := TargetAllocatorRBAC(ta, nil, tc.mtls)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Namespaced).To(Equal(tc.namespaced))
			g.Expect(p.Cluster).To(Equal(tc.cluster))
		})
	}
}

// TestClusterRBACName: long names are cut to 63 characters, the name first, as the collector's
// ClusterRole names are.
func TestTargetAllocatorClusterRBACName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(TargetAllocatorClusterRBACName("otel", "prod")).To(Equal("otel-prod-targetallocator"))
	long := TargetAllocatorClusterRBACName("a-very-long-collector-name-that-goes-on-and-on", "a-long-namespace-name-too")
	g.Expect(len(long)).To(BeNumerically("<=", 63))
	g.Expect(long).To(HaveSuffix("-a-long-namespace-name-too-targetallocator"))
}
