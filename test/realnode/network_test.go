package realnode_test

import (
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/test/realnode"
)

// TestNamespaceHasNoWayOut checks the network rule where the cluster runs: the namespace holds
// only loopback, the pods' bridge and their veth ends, and no route leaves it (no default route,
// nothing but the pod network and local addresses).
func TestNamespaceHasNoWayOut(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	links, err := exec.Command("ip", "-o", "link", "show").Output()
	g.Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(strings.TrimSpace(string(links)), "\n") {
		name := strings.TrimSpace(strings.Split(strings.SplitN(line, ":", 3)[1], "@")[0])
		g.Expect(name).To(Or(Equal("lo"), Equal("cni0"), HavePrefix("veth")), "unexpected link: %s", line)
	}
	routes, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	g.Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(strings.TrimSpace(string(routes)), "\n") {
		g.Expect(line).NotTo(HavePrefix("default"), "a route out of the namespace")
		if !strings.HasPrefix(line, "local ") && !strings.HasPrefix(line, "broadcast ") {
			g.Expect(line).To(HavePrefix(strings.TrimSuffix(realnode.PodCIDR, "/24")), "unexpected route: %s", line)
		}
	}
}
