package app

import (
	"context"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// testChartRegistry walks version 0.20.8 (cfg.Spec.Versions[1]) through the chart registry
// settings: a chartCABundleRef that is missing, then not PEM, then good (copied into a Secret
// next to the OCIRepository and referenced from certSecretRef, following its source), then
// chartInsecure instead (refused for the default internet registry, accepted for an in-cluster
// one; the copy goes), then the CA again, which stays for the later steps (bad
// input must not delete it, deletion must).
func testChartRegistry(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS string, cfg *spv1alpha1.ProviderConfig) {
	g := newG(t)
	pc := world.Platform.Client
	repoKey := client.ObjectKey{Namespace: platformNS, Name: instance.OCIRepositoryName(key.Name)}
	caKey := client.ObjectKey{Namespace: platformNS, Name: instance.ChartCASecretName(key.Name)}
	ref := &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "registry-ca"}, Key: "ca.crt"}
	update := func(f func(v *spv1alpha1.VersionConfig)) {
		g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
		f(&cfg.Spec.Versions[1])
		g.Expect(pc.Update(ctx, cfg)).To(Succeed())
	}
	repo := func(g Gomega) *sourcev1.OCIRepository {
		r := &sourcev1.OCIRepository{}
		g.Expect(pc.Get(ctx, repoKey, r)).To(Succeed())
		return r
	}
	copied := func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(pc.Get(ctx, caKey, s)).To(Succeed())
		g.Expect(s.Labels).To(HaveKeyWithValue(instance.InstanceLabel, instance.ID(key.Namespace, key.Name)))
		g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
		return string(s.Data[flux.CAKey])
	}

	update(func(v *spv1alpha1.VersionConfig) { v.ChartCABundleRef = ref })
	expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration,
		`spec.versions["0.20.8"].chartCABundleRef: ConfigMap openmcp-system/registry-ca not found`)
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "registry-ca", Namespace: world.PodNamespace}, Data: map[string]string{"ca.crt": "not a certificate"}}
	g.Expect(pc.Create(ctx, src)).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration,
		`spec.versions["0.20.8"].chartCABundleRef.key: ConfigMap openmcp-system/registry-ca key "ca.crt": no PEM certificate`)
	g.Expect(repo(g).Spec.CertSecretRef).To(BeNil(), "bad input changes nothing")

	ca1, ca2 := string(testenv.NewCA(t, "registry CA 1").PEM()), string(testenv.NewCA(t, "registry CA 2").PEM())
	src.Data["ca.crt"] = ca1
	g.Expect(pc.Update(ctx, src)).To(Succeed())
	g.Eventually(copied).Should(Equal(ca1))
	g.Eventually(func(g Gomega) {
		r := repo(g)
		g.Expect(r.Spec.CertSecretRef).NotTo(BeNil())
		g.Expect(r.Spec.CertSecretRef.Name).To(Equal(caKey.Name))
		g.Expect(r.Spec.Insecure).To(BeFalse())
	}).Should(Succeed())
	// The copy follows its source.
	src.Data["ca.crt"] = ca2
	g.Expect(pc.Update(ctx, src)).To(Succeed())
	g.Eventually(copied).Should(Equal(ca2))

	// chartInsecure for a registry on the internet (the default chartURL) would let anyone on the
	// path serve the chart over unverified HTTPS: refused naming the field, the OCIRepository
	// keeps verifying.
	update(func(v *spv1alpha1.VersionConfig) { v.ChartCABundleRef, v.ChartInsecure = nil, true })
	expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration,
		`spec.versions["0.20.8"].chartInsecure: not allowed for registry "ghcr.io"`)
	g.Expect(repo(g).Spec.Insecure).To(BeFalse())

	// Plain HTTP from an in-cluster registry instead: insecure set, no certSecretRef, the copy deleted.
	const inCluster = "oci://registry.registry.svc:5000/charts/opentelemetry-kube-stack"
	update(func(v *spv1alpha1.VersionConfig) { v.ChartURL = inCluster })
	g.Eventually(func(g Gomega) {
		r := repo(g)
		g.Expect(r.Spec.Insecure).To(BeTrue())
		g.Expect(r.Spec.CertSecretRef).To(BeNil())
	}).Should(Succeed())
	g.Eventually(func() error { return pc.Get(ctx, caKey, &corev1.Secret{}) }).Should(Satisfy(apierrors.IsNotFound))

	// And the CA again, for the rest of the test: insecure is removed from the object, not just false.
	update(func(v *spv1alpha1.VersionConfig) { v.ChartCABundleRef, v.ChartInsecure, v.ChartURL = ref, false, "" })
	g.Eventually(copied).Should(Equal(ca2))
	g.Eventually(func(g Gomega) {
		r := repo(g)
		g.Expect(r.Spec.Insecure).To(BeFalse())
		g.Expect(r.Spec.CertSecretRef).NotTo(BeNil())
	}).Should(Succeed())
	o := expectReadyWithFlux(t, ctx, key, platformNS, "")
	g.Expect(o.Status.Resources).To(ContainElement(And(
		HaveField("Kind", "Secret"), HaveField("Name", caKey.Name), HaveField("Location", spv1alpha1.LocationPlatformCluster),
		HaveField("Phase", spv1alpha1.ResourceReady))))
}
