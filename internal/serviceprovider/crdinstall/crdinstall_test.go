package crdinstall

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
)

func TestEmbeddedCRDs(t *testing.T) {
	g := NewWithT(t)
	crds, err := CRDs()
	g.Expect(err).NotTo(HaveOccurred())
	kinds := map[string]string{}
	for _, c := range crds {
		kinds[c.Spec.Names.Kind] = string(c.Spec.Scope)
		g.Expect(c.Spec.Group).To(Equal(spv1alpha1.GroupVersion.Group))
	}
	g.Expect(kinds).To(Equal(map[string]string{"OtelOperator": "Namespaced", "ProviderConfig": "Cluster"}))
	g.Expect(ProvidedKinds()).To(HaveLen(1))
	g.Expect(ProvidedKinds()[0].Kind).To(Equal("OtelOperator"))
}

func TestSamplesDecodeStrictly(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "config", "service-provider", "samples")
	tests := []struct {
		file string
		into any
	}{
		{"providerconfig.yaml", &spv1alpha1.ProviderConfig{}},
		{"oteloperator.yaml", &spv1alpha1.OtelOperator{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			g := NewWithT(t)
			raw, err := os.ReadFile(filepath.Join(dir, tt.file))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(yaml.UnmarshalStrict(raw, tt.into)).To(Succeed())
		})
	}
}

// Each CRD carries OpenMCP's cluster label, which is what Init installs it by: ProviderConfig on
// the platform cluster, OtelOperator on the onboarding cluster.
func TestCRDsCarryTheirClusterLabel(t *testing.T) {
	g := NewWithT(t)
	crds, err := CRDs()
	g.Expect(err).NotTo(HaveOccurred())
	got := map[string]string{}
	for _, c := range crds {
		got[c.Spec.Names.Kind] = c.Labels[ClusterLabel]
	}
	g.Expect(got).To(Equal(map[string]string{"OtelOperator": ClusterOnboarding, "ProviderConfig": ClusterPlatform}))
}
