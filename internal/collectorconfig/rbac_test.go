package collectorconfig

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

func rule(group string, resources []string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
}

func TestRBACRules(t *testing.T) {
	pipeline := func(kind, id string) string {
		switch kind {
		case "receivers":
			return `service: {pipelines: {metrics: {receivers: [` + id + `], exporters: [debug]}}}`
		case "processors":
			return `service: {pipelines: {metrics: {receivers: [otlp], processors: [` + id + `], exporters: [debug]}}}`
		}
		return `service: {extensions: [` + id + `], pipelines: {metrics: {receivers: [otlp], exporters: [debug]}}}`
	}
	base := `exporters: {debug: {}}
`
	for _, tc := range []struct {
		name, cfg string
		want      []rbacv1.PolicyRule
	}{
		{
			name: "k8sattributes defaults",
			cfg:  "processors: {k8sattributes: {}}\n" + pipeline("processors", "k8sattributes"),
			want: []rbacv1.PolicyRule{
				rule("", []string{"pods", "namespaces"}, "get", "watch", "list"),
				rule("apps", []string{"replicasets"}, "get", "watch", "list"),
			},
		},
		{
			name: "k8sattributes node and cronjob metadata",
			cfg: `processors: {k8s_attributes: {extract: {metadata: [k8s.pod.name, k8s.node.name, k8s.node.uid, k8s.cronjob.uid],
				labels: [{from: cronjob, key: a}]}}}
` + pipeline("processors", "k8s_attributes"),
			want: []rbacv1.PolicyRule{
				rule("", []string{"pods", "namespaces"}, "get", "watch", "list"),
				rule("", []string{"nodes"}, "get", "watch", "list"),
				rule("batch", []string{"jobs"}, "get", "watch", "list"),
				rule("batch", []string{"cronjobs"}, "get", "watch", "list"),
			},
		},
		{
			name: "k8sattributes deployment name",
			cfg:  "processors: {k8sattributes/x: {extract: {metadata: [k8s.deployment.name, service.name]}}}\n" + pipeline("processors", "k8sattributes/x"),
			want: []rbacv1.PolicyRule{
				rule("", []string{"pods", "namespaces"}, "get", "watch", "list"),
				rule("apps", []string{"replicasets"}, "get", "watch", "list"),
			},
		},
		{
			name: "resourcedetection",
			cfg:  "processors: {resourcedetection: {detectors: [env, k8snode, openshift]}}\n" + pipeline("processors", "resourcedetection"),
			want: []rbacv1.PolicyRule{
				rule("", []string{"nodes"}, "get", "list"),
				rule("config.openshift.io", []string{"infrastructures", "infrastructures/status"}, "get", "watch", "list"),
			},
		},
		{
			name: "k8s_cluster on openshift",
			cfg:  "receivers: {k8s_cluster: {distribution: openshift}}\n" + pipeline("receivers", "k8s_cluster"),
			want: append(clusterReadRules(), rule("quota.openshift.io", []string{"clusterresourcequotas"}, "get", "list", "watch")),
		},
		{
			name: "k8s_events",
			cfg:  "receivers: {k8s_events: {}}\n" + pipeline("receivers", "k8s_events"),
			want: clusterReadRules(),
		},
		{
			name: "k8sobjects",
			cfg: `receivers: {k8sobjects: {objects: [{name: pods, mode: pull}, {name: events, mode: pull},
				{name: events, mode: watch, group: events.k8s.io}]}}
` + pipeline("receivers", "k8sobjects"),
			want: []rbacv1.PolicyRule{
				rule("", []string{"pods"}, "list", "get"),
				rule("", []string{"events"}, "list"),
				rule("events.k8s.io", []string{"events"}, "list", "watch"),
			},
		},
		{
			name: "kubeletstats with utilization metric",
			cfg:  "receivers: {kubeletstats: {metrics: {k8s.pod.cpu_limit_utilization: {enabled: true}}}}\n" + pipeline("receivers", "kubeletstats"),
			want: []rbacv1.PolicyRule{rule("", []string{"nodes/stats"}, "get"), rule("", []string{"nodes/proxy"}, "get")},
		},
		{
			name: "kubeletstats plain",
			cfg:  "receivers: {kubeletstats: {}}\n" + pipeline("receivers", "kubeletstats"),
			want: []rbacv1.PolicyRule{rule("", []string{"nodes/stats"}, "get")},
		},
		{
			name: "k8s_observer",
			cfg:  "receivers: {otlp: {}}\nextensions: {k8s_observer: {observe_pods: true, observe_nodes: true}}\n" + pipeline("extensions", "k8s_observer"),
			want: []rbacv1.PolicyRule{rule("", []string{"pods"}, "list", "watch"), rule("", []string{"nodes"}, "list", "watch")},
		},
		{
			name: "k8s_leader_elector",
			cfg:  "receivers: {otlp: {}}\nextensions: {k8s_leader_elector: {}}\n" + pipeline("extensions", "k8s_leader_elector"),
			want: []rbacv1.PolicyRule{rule("coordination.k8s.io", []string{"leases"}, "get", "create", "update")},
		},
		{
			name: "unused components need nothing",
			cfg:  "receivers: {otlp: {}, k8s_cluster: {}}\nprocessors: {k8sattributes: {}}\n" + pipeline("receivers", "otlp"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(RBACRules(Parse(mustYAML(t, base+tc.cfg)))).To(Equal(tc.want))
		})
	}
}

func TestRBACRulesDeduplicated(t *testing.T) {
	g := NewWithT(t)
	c := Parse(mustYAML(t, `
receivers: {k8s_cluster: {}, k8s_events: {}}
exporters: {debug: {}}
service: {pipelines: {metrics: {receivers: [k8s_cluster], exporters: [debug]}, logs: {receivers: [k8s_events], exporters: [debug]}}}
`))
	g.Expect(RBACRules(c)).To(Equal(clusterReadRules()))
}

func TestEnvVars(t *testing.T) {
	g := NewWithT(t)
	c := Parse(mustYAML(t, `
receivers: {kubeletstats: {}, kubeletstats/b: {}}
exporters: {debug: {}}
service: {pipelines: {metrics: {receivers: [kubeletstats, kubeletstats/b], exporters: [debug]}}}
`))
	g.Expect(EnvVars(c)).To(Equal([]corev1.EnvVar{{Name: "K8S_NODE_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}))
	g.Expect(EnvVars(Parse(mustYAML(t, sampleConfig)))).To(BeEmpty())
}

func TestHealthProbes(t *testing.T) {
	g := NewWithT(t)
	p := HealthProbes(Parse(mustYAML(t, sampleConfig)))
	g.Expect(p.Liveness.HTTPGet.Path).To(Equal("/healthz"))
	g.Expect(p.Liveness.HTTPGet.Port.IntValue()).To(Equal(13134))
	g.Expect(p.Readiness).To(Equal(p.Liveness))
	g.Expect(p.Startup).To(Equal(p.Liveness))

	p = HealthProbes(Parse(mustYAML(t, `{extensions: {health_check/x: null}, service: {extensions: [health_check/x]}}`)))
	g.Expect(p.Readiness.HTTPGet.Path).To(Equal("/"))
	g.Expect(p.Readiness.HTTPGet.Port.IntValue()).To(Equal(13133))

	p = HealthProbes(Parse(mustYAML(t, `{extensions: {health_check: {}}, service: {extensions: []}}`)))
	g.Expect(p).To(Equal(Probes{}))
}
