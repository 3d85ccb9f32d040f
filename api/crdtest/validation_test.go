package crdtest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const minimalConfig = `
  config:
    receivers: {otlp: {protocols: {grpc: {}}}}
    exporters: {debug: {}}
    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}
`

func collector(spec string) string {
	return "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata: {name: bad}\nspec:\n" + spec
}

// TestInvalidObjectsRejected checks that the API server itself (no webhooks) rejects invalid
// objects and names the offending field in the message.
func TestInvalidObjectsRejected(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{name: "unknown mode", manifest: collector("  mode: bogus" + minimalConfig),
			want: []string{"spec.mode", `Unsupported value: "bogus"`}},
		{name: "sidecar with tolerations", manifest: collector("  mode: sidecar\n  tolerations: [{operator: Exists}]" + minimalConfig),
			want: []string{"spec", "does not support the attribute 'tolerations'"}},
		{name: "sidecar with priorityClassName", manifest: collector("  mode: sidecar\n  priorityClassName: high" + minimalConfig),
			want: []string{"spec", "does not support the attribute 'priorityClassName'"}},
		{name: "sidecar with affinity", manifest: collector("  mode: sidecar\n  affinity: {nodeAffinity: {}}" + minimalConfig),
			want: []string{"spec", "does not support the attribute 'affinity'"}},
		{name: "sidecar with additionalContainers", manifest: collector("  mode: sidecar\n  additionalContainers: [{name: x, image: busybox}]" + minimalConfig),
			want: []string{"spec", "does not support the attribute 'additionalContainers'"}},
		{name: "unknown management state", manifest: collector("  managementState: sometimes" + minimalConfig),
			want: []string{"spec.managementState", "Unsupported value"}},
		{name: "unknown upgrade strategy", manifest: collector("  upgradeStrategy: always" + minimalConfig),
			want: []string{"spec.upgradeStrategy", "Unsupported value"}},
		{name: "unknown allocation strategy", manifest: collector("  targetAllocator: {allocationStrategy: random}" + minimalConfig),
			want: []string{"spec.targetAllocator.allocationStrategy", "Unsupported value"}},
		{name: "unknown ingress type", manifest: collector("  ingress: {type: gateway}" + minimalConfig),
			want: []string{"spec.ingress.type", "Unsupported value"}},
		{name: "unknown route termination", manifest: collector("  ingress: {route: {termination: none}}" + minimalConfig),
			want: []string{"spec.ingress.route.termination", "Unsupported value"}},
		{name: "unknown pod management policy", manifest: collector("  podManagementPolicy: Random" + minimalConfig),
			want: []string{"spec.podManagementPolicy", "Unsupported value"}},
		{name: "configVersions below minimum", manifest: collector("  configVersions: 0" + minimalConfig),
			want: []string{"spec.configVersions", "greater than or equal to 1"}},
		{name: "autoscaler maxReplicas below minimum", manifest: collector("  autoscaler: {maxReplicas: 0}" + minimalConfig),
			want: []string{"spec.autoscaler.maxReplicas", "greater than or equal to 1"}},
		{name: "probe period below minimum", manifest: collector("  livenessProbe: {periodSeconds: 0}" + minimalConfig),
			want: []string{"spec.livenessProbe.periodSeconds", "greater than or equal to 1"}},
		{name: "hostPort above maximum", manifest: collector("  ports: [{name: p, port: 1, hostPort: 70000}]" + minimalConfig),
			want: []string{"spec.ports[0].hostPort", "less than or equal to 65535"}},
		{name: "empty command", manifest: collector("  command: []" + minimalConfig),
			want: []string{"spec.command", "at least 1 items"}},
		{name: "missing config", manifest: collector("  mode: deployment\n"),
			want: []string{"spec.config", "Required value"}},
		{name: "config without pipelines", manifest: collector("  config: {receivers: {}, exporters: {}, service: {}}\n"),
			want: []string{"spec.config.service.pipelines", "Required value"}},
		{name: "opamp bridge with negative replicas",
			manifest: "apiVersion: opentelemetry.io/v1alpha1\nkind: OpAMPBridge\nmetadata: {name: bad}\nspec: {endpoint: ws://x, capabilities: {AcceptsRemoteConfig: true}, replicas: -1}\n",
			want:     []string{"spec.replicas", "greater than or equal to 0"}},
		{name: "opamp bridge without endpoint",
			manifest: "apiVersion: opentelemetry.io/v1alpha1\nkind: OpAMPBridge\nmetadata: {name: bad}\nspec: {capabilities: {AcceptsRemoteConfig: true}}\n",
			want:     []string{"spec.endpoint", "Required value"}},
		{name: "instrumentation with unknown sampler",
			manifest: "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: bad}\nspec: {sampler: {type: sometimes}}\n",
			want:     []string{"spec.sampler.type", "Unsupported value"}},
		{name: "instrumentation with unknown propagator",
			manifest: "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: bad}\nspec: {propagators: [carrier-pigeon]}\n",
			want:     []string{"spec.propagators[0]", "Unsupported value"}},
		{name: "instrumentation nginx config file with spaces",
			manifest: "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: bad}\nspec: {nginx: {configFile: 'a b'}}\n",
			want:     []string{"spec.nginx.configFile", "should match"}},
		{name: "target allocator with unknown filter strategy",
			manifest: "apiVersion: opentelemetry.io/v1alpha1\nkind: TargetAllocator\nmetadata: {name: bad}\nspec: {filterStrategy: none}\n",
			want:     []string{"spec.filterStrategy", "Unsupported value"}},
	}
	ns := namespace(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			u := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(tt.manifest), &u.Object)).To(Succeed())
			u.SetNamespace(ns)
			err := env.Client.Create(context.Background(), u)
			g.Expect(err).To(HaveOccurred())
			for _, w := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
}

// TestSidecarWithoutForbiddenFieldsAccepted makes sure the CEL rules do not reject valid
// sidecars or other modes using the fields sidecars may not use.
func TestSidecarWithoutForbiddenFieldsAccepted(t *testing.T) {
	ns := namespace(t)
	for name, spec := range map[string]string{
		"plain sidecar":              "  mode: sidecar" + minimalConfig,
		"deployment with the fields": "  mode: deployment\n  tolerations: [{operator: Exists}]\n  priorityClassName: high\n  affinity: {nodeAffinity: {}}\n  additionalContainers: [{name: x, image: busybox}]" + minimalConfig,
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			u := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(collector(spec)), &u.Object)).To(Succeed())
			u.SetNamespace(ns)
			u.SetGenerateName("ok-")
			u.SetName("")
			g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())
		})
	}
}
