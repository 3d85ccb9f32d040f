package podmutation_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/instrumentation"
)

// TestDotNetProfilerPath: a .NET pod sent through the API server gets the profiler directory the
// agent image has for its C library (the otel-dotnet-auto-runtime annotation) and, when its spec
// pins it to arm64 nodes, its CPU; an unknown runtime is refused with a warning that names the
// annotation and the values it takes.
func TestDotNetProfilerPath(t *testing.T) {
	ns := newNamespace(t, "dotnet-profiler", nil)
	newInstrumentation(t, ns, "otel")
	const dir = "/otel-auto-instrumentation-dotnet/"
	armAffinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}},
		}}},
	}}}
	tests := []struct {
		name    string
		runtime string
		edit    func(*corev1.PodSpec)
		want    string
	}{
		{name: "glibc", want: dir + "linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{name: "musl", runtime: "linux-musl-x64", want: dir + "linux-musl-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{name: "glibc-arm64", edit: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"} },
			want: dir + "linux-arm64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{name: "musl-arm64", runtime: "linux-musl-x64", edit: func(s *corev1.PodSpec) { s.Affinity = armAffinity },
			want: dir + "linux-musl-arm64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{name: "amd64", edit: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelArchStable: "amd64"} },
			want: dir + "linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ann := map[string]string{instrumentation.InjectAnnotation(instrumentation.DotNet): "true"}
			if tt.runtime != "" {
				ann[instrumentation.DotNetRuntimeAnnotation] = tt.runtime
			}
			pod := newPod(ns, "p-"+tt.name, ann)
			if tt.edit != nil {
				tt.edit(&pod.Spec)
			}
			got, warnings := create(t, pod)
			g.Expect(warnings).To(BeEmpty())
			g.Expect(envValue(got.Spec.Containers[0], "CORECLR_PROFILER_PATH")).To(Equal(tt.want))
		})
	}
	t.Run("unknown runtime", func(t *testing.T) {
		g := NewWithT(t)
		got, warnings := create(t, newPod(ns, "p-unknown", map[string]string{
			instrumentation.InjectAnnotation(instrumentation.DotNet): "true",
			instrumentation.DotNetRuntimeAnnotation:                  "linux-arm64",
		}))
		g.Expect(warnings).To(ContainElement(And(
			ContainSubstring("dotnet instrumentation not injected"),
			ContainSubstring(`instrumentation.opentelemetry.io/otel-dotnet-auto-runtime="linux-arm64"`),
			ContainSubstring("linux-x64"), ContainSubstring("linux-musl-x64"))))
		g.Expect(got.Annotations).NotTo(HaveKey(instrumentation.InjectedAnnotation))
		g.Expect(envNames(got.Spec.Containers[0])).NotTo(ContainElement("CORECLR_PROFILER_PATH"))
	})
}
