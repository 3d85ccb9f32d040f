package collector_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// A new collector that becomes Ready gets two Events, what a person wants to read: the objects
// Applied, then Ready=True. Its first condition (Progressing) repeats the first and gets none.
func TestNewCollectorEventsAreAppliedThenReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, newCollector(t, ns, "quiet", v1beta1.ModeDeployment, otlpConfig))).To(Succeed())
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) { get(g, ns, "quiet-collector", dep) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, dep.Name)

	var notes []string
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		notes = notes[:0]
		for _, e := range list.Items {
			if e.Regarding.Name == "quiet" {
				notes = append(notes, e.Reason)
			}
		}
		g.Expect(notes).To(ContainElement(v1beta1.ReasonReconciled))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == "quiet" {
				reasons = append(reasons, e.Reason)
			}
		}
		g.Expect(reasons).To(ConsistOf("Applied", v1beta1.ReasonReconciled))
	}).WithTimeout(3 * poll * 10).WithPolling(poll).Should(Succeed())
}
