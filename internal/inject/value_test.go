package inject

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

func TestResolve(t *testing.T) {
	tests := []struct{ pod, ns, want string }{
		{"", "", ""},
		{"", "true", "true"},
		{"", "agent", "agent"},
		{"", "false", "false"},
		{"true", "", "true"},
		{"true", "false", "true"},
		{"TRUE", "True", "TRUE"},
		{"true", "agent", "agent"},
		{"true", "other/agent", "other/agent"},
		{"false", "true", "false"},
		{"agent", "other", "agent"},
		{" agent ", "", "agent"},
	}
	for _, tt := range tests {
		NewWithT(t).Expect(Resolve(tt.pod, tt.ns)).To(Equal(tt.want), "pod %q, namespace %q", tt.pod, tt.ns)
	}
	g := NewWithT(t)
	g.Expect(NeedsNamespace("")).To(BeTrue())
	g.Expect(NeedsNamespace("True")).To(BeTrue())
	g.Expect(NeedsNamespace("false")).To(BeFalse())
	g.Expect(NeedsNamespace("agent")).To(BeFalse())
}

func TestTarget(t *testing.T) {
	g := NewWithT(t)
	got, err := Target("k", "agent", "apps")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(types.NamespacedName{Namespace: "apps", Name: "agent"}))
	got, err = Target("k", "obs/agent", "apps")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(types.NamespacedName{Namespace: "obs", Name: "agent"}))
	for _, bad := range []string{"/agent", "obs/", "a/b/c", ""} {
		_, err := Target("my/annotation", bad, "apps")
		g.Expect(err).To(MatchError(ContainSubstring("my/annotation")), bad)
	}
}
