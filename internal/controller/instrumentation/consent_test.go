package instrumentation_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// TestCrossNamespaceReferenceNeedsConsent is the attack of issue 29, finding 2, on the catch-up
// controller: a Deployment of namespace A names B's Instrumentation ("B/instr"), which opts in to
// restarts. Without B's consent the old controller listed A's workload in B's status.workloads
// and restarted it on B's say (A's workloads crowding B's status, B restarting A's workloads).
// Now the reference is ignored until B lists A in instrumentation.opentelemetry.io/allowed-namespaces,
// and even then A's workload is restarted only once it opts in itself. Positive control: B's own
// workload is reported and restarted on B's opt-in alone.
func TestCrossNamespaceReferenceNeedsConsent(t *testing.T) {
	g := NewWithT(t)
	nsB := newNamespace(t, nil)
	// A asks for B's Instrumentation for all its pods (the namespace annotation: the scan follows
	// namespaces that hold an Instrumentation or ask for one).
	nsA := newNamespace(t, map[string]string{inst.InjectAnnotation(inst.Java): "will be set below"})
	own := deployment(t, nsB, "own", map[string]string{inst.InjectAnnotation(inst.Java): "instr"}, nil)
	web := deployment(t, nsA, "web", nil, nil)
	setAnnotations(t, namespace(t, nsA), map[string]string{inst.InjectAnnotation(inst.Java): nsB + "/instr"})
	in := newInstrumentation(t, nsB, "instr", map[string]string{ctrlinst.RestartOptInAnnotation: "true"})

	g.Eventually(func(g Gomega) {
		g.Expect(workloads(g, nsB, "instr").PendingWorkloads).To(ConsistOf(HaveField("Name", "own")))
		g.Expect(restartedAt(g, own)).NotTo(BeEmpty(), "control: B's own workload is restarted on B's opt-in")
	}).WithTimeout(30 * time.Second).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(workloads(g, nsB, "instr").PendingWorkloads).NotTo(ContainElement(HaveField("Namespace", nsA)))
		g.Expect(restartedAt(g, web)).To(BeEmpty(), "A's workload is not restarted for B without B's consent")
	}).WithTimeout(3 * interval).WithPolling(poll).Should(Succeed())

	// B consents to A: A's workload is followed, but B's opt-in alone does not restart it.
	setAnnotations(t, in, map[string]string{inst.AllowedNamespacesAnnotation: nsA})
	g.Eventually(func(g Gomega) []v1alpha1.PendingWorkload {
		return workloads(g, nsB, "instr").PendingWorkloads
	}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(
		v1alpha1.PendingWorkload{Kind: "Deployment", Namespace: nsA, Name: "web", Reason: ctrlinst.ReasonNotInjected}))
	g.Consistently(func(g Gomega) string { return restartedAt(g, web) }).WithTimeout(3*interval).WithPolling(poll).
		Should(BeEmpty(), "A's workload has not opted in")

	// A's workload opts in (we play the Deployment controller, which observes the new generation):
	// restarted (the rate limit may defer it by up to 10 s).
	setAnnotations(t, web, map[string]string{ctrlinst.RestartOptInAnnotation: "true"})
	settleDeployment(t, web, 1) // a Deployment's annotations are part of its generation
	g.Eventually(func(g Gomega) string { return restartedAt(g, web) }).WithTimeout(30 * time.Second).WithPolling(poll).
		ShouldNot(BeEmpty())
}

func namespace(t *testing.T, name string) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, ns); err != nil {
		t.Fatal(err)
	}
	return ns
}
