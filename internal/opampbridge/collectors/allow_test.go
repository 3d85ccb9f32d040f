package collectors

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1beta1"
)

// TestCheckChanges: what a server may change, by default and with Options.Writable.
func TestCheckChanges(t *testing.T) {
	existing := &v1beta1.OpenTelemetryCollector{}
	existing.Labels = map[string]string{ManagedLabel: "b", "team": "x"}
	existing.Spec.Image = "otel/collector:1"
	existing.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	existing.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	head := "metadata: {labels: {opentelemetry.io/opamp-managed: b}}\nspec:\n  config: {receivers: {otlp: {}}}\n"
	tests := []struct {
		name     string
		spec     string
		writable []string
		wantErr  string
	}{
		{"config only", "", nil, ""},
		{"unchanged fields echoed back", "  image: otel/collector:1\n  env: [{name: A, value: \"1\"}]\n  resources: {limits: {memory: 1024Mi}}\n", nil, ""},
		{"a new image", "  image: attacker/x\n", nil, "spec.image"},
		{"replicas by default", "  replicas: 3\n", nil, "spec.replicas"},
		{"replicas when allowed", "  replicas: 3\n", []string{WritableReplicas}, ""},
		{"resources when allowed", "  resources: {limits: {memory: 2Gi}}\n", []string{WritableResources}, ""},
		{"env values when allowed", "  env: [{name: A, value: \"2\"}, {name: B, value: x}]\n", []string{WritableEnv}, ""},
		{"env sources never", "  env: [{name: A, value: \"1\"}, {name: S, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n", []string{WritableEnv}, "spec.env[1].valueFrom"},
		{"envFrom never", "  envFrom: [{secretRef: {name: s}}]\n", []string{WritableEnv}, "spec.envFrom"},
		{"allowed fields do not open others", "  replicas: 2\n  hostNetwork: true\n", []string{WritableReplicas}, "spec.hostNetwork"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d, err := ParseCollector(Key{"ns", "a"}, []byte(head+tt.spec), Rules{Bridge: Bridge{Namespace: "ns", Name: "b"}})
			g.Expect(err).NotTo(HaveOccurred())
			err = checkChanges(d, existing, tt.writable)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
	g := NewWithT(t)
	d, err := ParseCollector(Key{"ns", "a"}, []byte("metadata: {labels: {opentelemetry.io/opamp-managed: b, team: y}}\nspec: {}\n"), Rules{Bridge: Bridge{Namespace: "ns", Name: "b"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(checkChanges(d, existing, WritableFields)).To(MatchError(ContainSubstring("metadata.labels[team]")))
	g.Expect(CheckWritable([]string{"replicas", "image"})).To(MatchError(ContainSubstring(`"image"`)))
}
