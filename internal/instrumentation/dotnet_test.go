package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// arch builds node selector expressions on kubernetes.io/arch.
func arch(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: op, Values: values}
}

// required is a pod spec whose required node affinity has the given terms, each a list of
// expressions.
func required(terms ...[]corev1.NodeSelectorRequirement) corev1.PodSpec {
	sel := &corev1.NodeSelector{}
	for _, t := range terms {
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
	}
	return corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}}
}

func exprs(e ...corev1.NodeSelectorRequirement) []corev1.NodeSelectorRequirement { return e }

func TestNodeArch(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	withSelector := func(s corev1.PodSpec, arch string) corev1.PodSpec {
		s.NodeSelector = map[string]string{corev1.LabelArchStable: arch}
		return s
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"nothing said", corev1.PodSpec{}, ""},
		{"nodeSelector arm64", corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "arm64", corev1.LabelOSStable: "linux"}}, "arm64"},
		{"nodeSelector amd64", corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"}}, "amd64"},
		{"nodeSelector on another label", corev1.PodSpec{NodeSelector: map[string]string{"arch": "arm64"}}, ""},
		{"affinity In arm64", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64"))), "arm64"},
		{"affinity In arm64 and another label", required(exprs(zone, arch(corev1.NodeSelectorOpIn, "arm64"))), "arm64"},
		{"affinity In both", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64", "amd64"))), ""},
		{"affinity In both, NotIn amd64", required(exprs(arch(corev1.NodeSelectorOpNotIn, "amd64"), arch(corev1.NodeSelectorOpIn, "arm64", "amd64"))), "arm64"},
		{"affinity two In narrowing to arm64", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64", "amd64"), arch(corev1.NodeSelectorOpIn, "arm64", "s390x"))), "arm64"},
		{"affinity NotIn amd64 alone", required(exprs(arch(corev1.NodeSelectorOpNotIn, "amd64"))), ""},
		{"affinity Exists", required(exprs(arch(corev1.NodeSelectorOpExists))), ""},
		{"affinity two terms, both arm64", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64")), exprs(zone, arch(corev1.NodeSelectorOpIn, "arm64"))), "arm64"},
		{"affinity two terms, one unrestricted", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64")), exprs(zone)), ""},
		{"affinity two terms, arm64 or amd64", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64")), exprs(arch(corev1.NodeSelectorOpIn, "amd64"))), ""},
		{"affinity on another label only", required(exprs(zone)), ""},
		{"preferred affinity only", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: exprs(arch(corev1.NodeSelectorOpIn, "arm64"))}}},
		}}}, ""},
		{"nodeSelector arm64, affinity allows both", withSelector(required(exprs(arch(corev1.NodeSelectorOpIn, "arm64", "amd64"))), "arm64"), "arm64"},
		{"nodeSelector amd64, affinity arm64 (unschedulable)", withSelector(required(exprs(arch(corev1.NodeSelectorOpIn, "arm64"))), "amd64"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(nodeArch(&tt.spec)).To(Equal(tt.want))
		})
	}
}

func TestDotNetProfilerPath(t *testing.T) {
	arm := corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"}}
	amd := corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"}}
	const dir = "/otel-auto-instrumentation-dotnet/"
	tests := []struct {
		runtime string
		spec    corev1.PodSpec
		want    string
	}{
		{"", corev1.PodSpec{}, dir + "linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"linux-x64", corev1.PodSpec{}, dir + "linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"linux-musl-x64", corev1.PodSpec{}, dir + "linux-musl-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"", amd, dir + "linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"linux-musl-x64", amd, dir + "linux-musl-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"", arm, dir + "linux-arm64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"linux-x64", arm, dir + "linux-arm64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"linux-musl-x64", arm, dir + "linux-musl-arm64/OpenTelemetry.AutoInstrumentation.Native.so"},
		{"linux-musl-x64", required(exprs(arch(corev1.NodeSelectorOpIn, "arm64"))), dir + "linux-musl-arm64/OpenTelemetry.AutoInstrumentation.Native.so"},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		got, err := dotnetProfilerPath(tt.runtime, &tt.spec)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tt.want), "runtime %q, nodeSelector %v", tt.runtime, tt.spec.NodeSelector)
	}
	// Upstream's values only: the arm64 directories are chosen from the spec, not named.
	for _, bad := range []string{"linux", "linux-musl", "linux-arm64", "linux-musl-arm64", "LINUX-X64"} {
		_, err := dotnetProfilerPath(bad, &corev1.PodSpec{})
		NewWithT(t).Expect(err).To(MatchError(And(
			ContainSubstring(`instrumentation.opentelemetry.io/otel-dotnet-auto-runtime="`+bad+`"`),
			ContainSubstring("linux-x64"), ContainSubstring("linux-musl-x64"))), bad)
	}
}
