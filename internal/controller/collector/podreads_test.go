package collector

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// A collector's pods are read podReadInterval after its trouble was first seen, then at most once
// per interval; between reads the last finding stands; forgetting starts the clock again.
func TestPodChecksThrottleReads(t *testing.T) {
	g := NewWithT(t)
	var p podChecks
	key := types.NamespacedName{Namespace: "ns", Name: "c"}
	t0 := time.Unix(1000, 0)

	wait, _ := p.due(key, t0)
	g.Expect(wait).To(Equal(podReadInterval), "no read when the trouble is first seen")
	wait, _ = p.due(key, t0.Add(4*time.Second))
	g.Expect(wait).To(Equal(6 * time.Second))
	wait, _ = p.due(key, t0.Add(podReadInterval))
	g.Expect(wait).To(BeZero())
	crash := &podCrash{pod: "p", container: "otc-container", reason: "CrashLoopBackOff"}
	p.record(key, t0.Add(podReadInterval), crash)

	wait, last := p.due(key, t0.Add(podReadInterval+time.Second))
	g.Expect(wait).To(Equal(podReadInterval - time.Second))
	g.Expect(last).To(Equal(crash), "the last finding stands until the next read")
	wait, _ = p.due(key, t0.Add(2*podReadInterval))
	g.Expect(wait).To(BeZero())

	p.forget(key)
	wait, last = p.due(key, t0.Add(3*podReadInterval))
	g.Expect(wait).To(Equal(podReadInterval))
	g.Expect(last).To(BeNil())
}
