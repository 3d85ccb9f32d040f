package instrumentation

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestLimiter(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	l := NewLimiter(3)
	for range 3 {
		g.Expect(l.Allow(t0)).To(BeTrue(), "a full bucket allows a burst of PerMinute")
	}
	g.Expect(l.Allow(t0)).To(BeFalse())
	g.Expect(l.Wait(t0)).To(Equal(20 * time.Second))
	g.Expect(l.Allow(t0.Add(19 * time.Second))).To(BeFalse())
	g.Expect(l.Allow(t0.Add(20 * time.Second))).To(BeTrue())
	// A long pause refills to PerMinute, not more.
	later := t0.Add(time.Hour)
	n := 0
	for l.Allow(later) {
		n++
	}
	g.Expect(n).To(Equal(3))
	// A clock going backwards takes nothing and gives nothing.
	g.Expect(l.Allow(t0)).To(BeFalse())

	none := NewLimiter(-1)
	g.Expect(none.Allow(t0)).To(BeFalse())
	g.Expect(none.Wait(t0)).To(Equal(time.Minute))
}
