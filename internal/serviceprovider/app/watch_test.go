package app

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// watchBound is how soon a Flux status change must reach the OtelOperator: far below the hour of
// poll interval the test sets, so only the watch can bring it.
const watchBound = 20 * time.Second

// testFluxWatched sets the poll interval to an hour: with nothing changing the provider does not
// reconcile the Ready OtelOperator key at all (controller-runtime's reconcile counter stays put),
// and then each status change the test makes as Flux would (the workload release Stalled, the
// OCIRepository failing, both recovering) reaches the OtelOperator's status within watchBound,
// through the watch on the Flux objects alone. The poll interval is restored at the end.
func testFluxWatched(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS string, cfg *spv1alpha1.ProviderConfig) {
	g := newG(t)
	pc := world.Platform.Client
	setPoll := func(d time.Duration) {
		g.Eventually(func() error {
			now := &spv1alpha1.ProviderConfig{}
			if err := pc.Get(ctx, client.ObjectKeyFromObject(cfg), now); err != nil {
				return err
			}
			now.Spec.PollInterval = &metav1.Duration{Duration: d}
			return pc.Update(ctx, now)
		}).Should(Succeed())
	}
	setPoll(time.Hour)
	defer func() {
		setPoll(time.Second)
		expectReadyWithFlux(t, ctx, key, platformNS, "")
	}()
	wlKey := client.ObjectKey{Namespace: platformNS, Name: instance.WorkloadReleaseName(key.Name)}
	// The Flux objects' interval follows the poll interval: once the release has it, every
	// reconcile since has read the hour. Flux, played here, then reports the new generations.
	g.Eventually(func(g Gomega) {
		hr := &helmv2.HelmRelease{}
		g.Expect(pc.Get(ctx, wlKey, hr)).To(Succeed())
		g.Expect(hr.Spec.Interval.Duration).To(Equal(time.Hour))
	}).Should(Succeed())
	expectReadyWithFlux(t, ctx, key, platformNS, "")

	// Positive control of the premise: left alone, nothing reconciles the object (requeues of the
	// one-second interval have run out, the next poll is an hour away).
	g.Eventually(func(g Gomega) {
		n := reconciles(g)
		g.Consistently(reconciles).WithTimeout(3 * time.Second).WithPolling(250 * time.Millisecond).Should(Equal(n))
	}).WithTimeout(watchBound).Should(Succeed())

	change := func(what string, status func(g Gomega), phase spv1alpha1.Phase, reason, msg string) {
		t.Helper()
		n := reconciles(g)
		start := time.Now()
		status(g)
		g.Eventually(func(g Gomega) { checkStatus(g, ctx, key, phase, reason, msg) }).WithTimeout(watchBound).Should(Succeed(), what)
		g.Expect(reconciles(g)).To(BeNumerically(">", n))
		t.Logf("%s reached the OtelOperator after %s", what, time.Since(start).Round(time.Millisecond))
	}
	change("the workload release Stalled", func(g Gomega) {
		hr := &helmv2.HelmRelease{}
		g.Expect(pc.Get(ctx, wlKey, hr)).To(Succeed())
		hr.Status.Conditions = []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "InstallFailed", Message: "watched: image pull backoff", ObservedGeneration: hr.Generation, LastTransitionTime: metav1.Now()},
			{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "RetriesExceeded", Message: "retries exhausted", LastTransitionTime: metav1.Now()},
		}
		g.Expect(pc.Status().Update(ctx, hr)).To(Succeed())
	}, spv1alpha1.PhaseFailed, spv1alpha1.ReasonReleaseFailed, "watched: image pull backoff")
	change("the workload release Ready again", func(g Gomega) { markFluxReady(g, ctx, platformNS) },
		spv1alpha1.PhaseReady, spv1alpha1.ReasonReconcileSuccess, "")
	change("the OCIRepository failing", func(g Gomega) {
		repo := &sourcev1.OCIRepository{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.OCIRepositoryName(key.Name)}, repo)).To(Succeed())
		repo.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "OCIArtifactPullFailed",
			Message: "watched: registry unreachable", ObservedGeneration: repo.Generation, LastTransitionTime: metav1.Now()}}
		g.Expect(pc.Status().Update(ctx, repo)).To(Succeed())
	}, spv1alpha1.PhaseProgressing, spv1alpha1.ReasonReconciling, "watched: registry unreachable")
	change("the OCIRepository Ready again", func(g Gomega) { markFluxReady(g, ctx, platformNS) },
		spv1alpha1.PhaseReady, spv1alpha1.ReasonReconcileSuccess, "")
}

// reconciles is how many reconciles the provider's controller has run in this process. The
// controller registers its counter at its first reconcile, long before this test.
func reconciles(g Gomega) float64 {
	n, err := testenv.ReconcileTotal(providerName)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(BeNumerically(">", 0), "no reconcile counted for controller %q", providerName)
	return n
}
