package collector

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// TestConfigMapNameMatchesUpstream checks the hash against the name upstream's e2e test
// versioned-configmaps asserts for the same collector after defaulting.
func TestConfigMapNameMatchesUpstream(t *testing.T) {
	g := NewWithT(t)
	opts := DefaultOptions()
	col := loadCR(t, "versioned-configmaps.yaml", opts)
	objs, err := Build(col, opts)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			names = append(names, cm.Name)
		}
	}
	g.Expect(names).To(Equal([]string{"simple-collector-5723ff27"}))
}
