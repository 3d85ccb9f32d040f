package instance

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestIDIsStableAndDNSSafe(t *testing.T) {
	g := NewWithT(t)
	tests := []struct{ ns, name string }{{"default", "test-cp"}, {"a", "b"}, {"tenant-with-long-name", "cp-with-a-very-long-name-indeed"}}
	seen := map[string]bool{}
	for _, tt := range tests {
		id := ID(tt.ns, tt.name)
		g.Expect(id).To(HaveLen(32))
		g.Expect(ID(tt.ns, tt.name)).To(Equal(id), "stable")
		g.Expect(validation.IsDNS1123Label(WorkloadNamespace(id))).To(BeEmpty())
		g.Expect(seen[id]).To(BeFalse())
		seen[id] = true
	}
	// ns/name is the key, so swapping them gives another ID.
	g.Expect(ID("x", "y")).NotTo(Equal(ID("y", "x")))
}

func TestNames(t *testing.T) {
	g := NewWithT(t)
	g.Expect(CRDsReleaseName("cp")).To(Equal("cp-crds"))
	g.Expect(WorkloadReleaseName("cp")).To(Equal("cp-workload"))
	g.Expect(OCIRepositoryName("cp")).To(Equal("cp"))
	g.Expect(ChartPullSecretName("cp")).To(Equal("sp-otelop-cp"))
	g.Expect(ChartCASecretName("cp")).To(Equal("sp-otelop-cp-ca"))
	g.Expect(Labels("abc")).To(HaveKeyWithValue(InstanceLabel, "abc"))
}

func TestHelmReleaseNameFitsHelmsLimit(t *testing.T) {
	if got := HelmReleaseName("cp-workload"); got != "cp-workload" {
		t.Fatalf("short names are kept, got %q", got)
	}
	long := strings.Repeat("a", 63)
	crds, wl := HelmReleaseName(CRDsReleaseName(long)), HelmReleaseName(WorkloadReleaseName(long))
	for _, n := range []string{crds, wl} {
		if len(n) > MaxReleaseName {
			t.Fatalf("%q is %d characters, Helm allows %d", n, len(n), MaxReleaseName)
		}
	}
	if crds == wl {
		t.Fatalf("distinct releases got one name %q", crds)
	}
	if again := HelmReleaseName(WorkloadReleaseName(long)); again != wl {
		t.Fatalf("not stable: %q then %q", wl, again)
	}
}
