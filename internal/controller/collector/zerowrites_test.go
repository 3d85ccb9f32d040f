package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
)

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// reconcileCount reads controller-runtime's reconcile_total for the collector controller.
func reconcileCount(g Gomega) float64 {
	n, err := testenv.ReconcileTotal("opentelemetrycollector")
	g.Expect(err).NotTo(HaveOccurred())
	return n
}

// TestNoWritesWhenNothingChanged is the zero-write proof: once collectors have converged, at least
// ten resyncs of each (sync period 2s) reach the reconciler and the operator sends no write request.
func TestNoWritesWhenNothingChanged(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	modes := []v1beta1.Mode{v1beta1.ModeDeployment, v1beta1.ModeDaemonSet, v1beta1.ModeStatefulSet, v1beta1.ModeSidecar}
	for _, m := range modes {
		col := newCollector(t, ns, "quiet-"+string(m), m, otlpConfig)
		g.Expect(k8s.Create(ctx, col)).To(Succeed())
	}
	// Converged: every collector has a status for its generation.
	g.Eventually(func(g Gomega) {
		for _, m := range modes {
			cur := get(g, ns, "quiet-"+string(m), &v1beta1.OpenTelemetryCollector{})
			g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, "quiet-deployment-collector")
	time.Sleep(3 * time.Second) // let the status change settle

	before, byReqBefore := writes.Snapshot()
	reconcilesBefore := reconcileCount(g)
	time.Sleep(22 * time.Second) // ≥ 10 sync periods
	after, _ := writes.Snapshot()
	reconciles := reconcileCount(g) - reconcilesBefore
	t.Logf("%.0f reconciles during the idle window, %d write requests", reconciles, after-before)
	g.Expect(reconciles).To(BeNumerically(">=", 10*float64(len(modes))), "resyncs must reach the reconciler")
	g.Expect(after-before).To(Equal(0), fmt.Sprintf("writes during idle resyncs: %v", writes.Since(byReqBefore)))
	_ = metav1.Now
}
