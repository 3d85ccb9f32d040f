package manifestutils

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// TestComponentEnvOrder: spec.env first, then what the operator adds in upstream's order, each
// left out when spec.env already names it.
func TestComponentEnvOrder(t *testing.T) {
	g := NewWithT(t)
	user := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "GOMAXPROCS", Value: "2"}}
	proxy := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "p"}, {Name: "A", Value: "ignored"}}
	env := ComponentEnv(user, "NS", true, "c", proxy)
	names := make([]string, len(env))
	for i, e := range env {
		names[i] = e.Name
	}
	g.Expect(names).To(Equal([]string{"A", "GOMAXPROCS", "NS", "GOMEMLIMIT", "HTTPS_PROXY"}))
	g.Expect(env[1].Value).To(Equal("2"))
	g.Expect(env[3].ValueFrom.ResourceFieldRef.ContainerName).To(Equal("c"))
	g.Expect(ComponentEnv(nil, "NS", false, "c", nil)).To(HaveLen(1))
}
