package app

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// testVersionChange changes spec.version of the Ready OtelOperator key (0.20.8) in place to
// 0.20.1 and back. Flux, played here, reports both releases Ready for their new generation while
// their history still shows the old chart (helm-controller before it has picked up the new
// artifact): the OtelOperator stays Progressing, naming both versions, and becomes Ready for the
// new version only once the histories show it. The workload release waits for the CRDs release of
// the new version (its dependsOn readyExpr).
func testVersionChange(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS string) {
	g := newG(t)
	oc, pc := world.Onboarding.Client, world.Platform.Client
	setVersion := func(v string) {
		g.Eventually(func() error {
			o := &spv1alpha1.OtelOperator{}
			if err := oc.Get(ctx, key, o); err != nil {
				return err
			}
			o.Spec.Version = v
			return oc.Update(ctx, o)
		}).Should(Succeed())
	}
	setVersion("0.20.1")
	g.Eventually(func(g Gomega) {
		repo := &sourcev1.OCIRepository{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.OCIRepositoryName(key.Name)}, repo)).To(Succeed())
		g.Expect(repo.Spec.Reference.Tag).To(Equal("0.20.1"))
		wlr := &helmv2.HelmRelease{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.WorkloadReleaseName(key.Name)}, wlr)).To(Succeed())
		g.Expect(wlr.Spec.DependsOn).To(HaveLen(1))
		g.Expect(wlr.Spec.DependsOn[0].Name).To(Equal(instance.CRDsReleaseName(key.Name)))
		g.Expect(wlr.Spec.DependsOn[0].ReadyExpr).To(ContainSubstring(`"0.20.1"`))

		markFluxConditionsReady(g, ctx, platformNS)
		o, c := readyCondition(g, ctx, key)
		g.Expect(c).NotTo(BeNil())
		g.Expect(o.Status.Phase).To(Equal(spv1alpha1.PhaseProgressing), c.Message)
		g.Expect(c.Message).To(ContainSubstring("upgrading to chart version 0.20.1 (installed 0.20.8)"))
		for _, r := range o.Status.Resources {
			if r.Kind == helmv2.HelmReleaseKind {
				g.Expect(r.Phase).To(Equal(spv1alpha1.ResourceProgressing), r.Name)
			}
		}
	}).Should(Succeed())
	expectReadyWithFlux(t, ctx, key, platformNS, "OpenTelemetry Operator 0.20.1 is ready")

	setVersion("0.20.8")
	expectReadyWithFlux(t, ctx, key, platformNS, "OpenTelemetry Operator 0.20.8 is ready")
}

// markFluxConditionsReady marks every Flux object in ns Ready for its generation and leaves the
// HelmReleases' history as it is.
func markFluxConditionsReady(g Gomega, ctx context.Context, ns string) {
	c := world.Platform.Client
	ready := func(gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "flux says ready", ObservedGeneration: gen, LastTransitionTime: metav1.Now()}}
	}
	var repos sourcev1.OCIRepositoryList
	g.Expect(c.List(ctx, &repos, client.InNamespace(ns))).To(Succeed())
	for i := range repos.Items {
		r := &repos.Items[i]
		r.Status.Conditions = ready(r.Generation)
		g.Expect(c.Status().Update(ctx, r)).To(Succeed())
	}
	var hrs helmv2.HelmReleaseList
	g.Expect(c.List(ctx, &hrs, client.InNamespace(ns))).To(Succeed())
	for i := range hrs.Items {
		h := &hrs.Items[i]
		h.Status.Conditions = ready(h.Generation)
		g.Expect(c.Status().Update(ctx, h)).To(Succeed())
	}
}
