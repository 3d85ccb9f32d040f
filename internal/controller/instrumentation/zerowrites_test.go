package instrumentation_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	inst "github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/testenv"
)

// TestNoWritesWhenNothingChanged is the zero-write proof: once the status reports the workloads
// (one instrumented, one pending without the opt-in), at least ten scans run and the operator sends
// no write request.
func TestNoWritesWhenNothingChanged(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, nil)
	java := map[string]string{inst.InjectAnnotation(inst.Java): "true"}
	deployment(t, ns, "done", java, javaRecord(ns, "quiet", 1))
	deployment(t, ns, "missed", java, nil)
	newInstrumentation(t, ns, "quiet", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(workloads(g, ns, "quiet")).To(Equal(&v1alpha1.InstrumentationWorkloads{Instrumented: 1, Pending: 1,
			PendingWorkloads: []v1alpha1.PendingWorkload{{Kind: "Deployment", Namespace: ns, Name: "missed", Reason: ctrlinst.ReasonNotInjected}}}))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	time.Sleep(2 * time.Second) // the Event and anything else in flight

	before, byReqBefore := writes.Snapshot()
	scansBefore, err := testenv.ReconcileTotal(ctrlinst.ControllerName)
	g.Expect(err).NotTo(HaveOccurred())
	time.Sleep(12 * interval)
	after, _ := writes.Snapshot()
	scansAfter, err := testenv.ReconcileTotal(ctrlinst.ControllerName)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("%.0f scans during the idle window, %d write requests", scansAfter-scansBefore, after-before)
	g.Expect(scansAfter-scansBefore).To(BeNumerically(">=", 10), "scans must run")
	g.Expect(after-before).To(Equal(0), fmt.Sprintf("writes during idle scans: %v", writes.Since(byReqBefore)))
}
