package app

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// testFluxRetryReset: with the workload release Stalled (the step before), the reconcile
// operation on the OtelOperator gives both HelmReleases one new token in Flux's requestedAt and
// resetAt annotations, which makes helm-controller reset the failure counts and retry; later
// reconciles carry the token over and write nothing.
func testFluxRetryReset(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS string) {
	g := newG(t)
	pc, oc := world.Platform.Client, world.Onboarding.Client
	releases := []client.ObjectKey{
		{Namespace: platformNS, Name: instance.CRDsReleaseName(key.Name)},
		{Namespace: platformNS, Name: instance.WorkloadReleaseName(key.Name)},
	}
	tokens := func(g Gomega) []string {
		var out []string
		for _, k := range releases {
			hr := &helmv2.HelmRelease{}
			g.Expect(pc.Get(ctx, k, hr)).To(Succeed())
			a := hr.GetAnnotations()
			out = append(out, a[fluxmeta.ReconcileRequestAnnotation], a[helmv2.ResetRequestAnnotation])
		}
		return out
	}
	// Positive control: without the operation nothing asks Flux for anything.
	g.Consistently(tokens).WithTimeout(2 * time.Second).Should(Equal([]string{"", "", "", ""}))

	setAnnotation(g, ctx, oc, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}, apireconciler.OperationReconcile)
	var got []string
	g.Eventually(func(g Gomega) {
		got = tokens(g)
		g.Expect(got[0]).NotTo(BeEmpty())
		g.Expect(got).To(Equal([]string{got[0], got[0], got[0], got[0]}), "requestedAt and resetAt equal (Flux handles the reset only then), on both releases")
	}).Should(Succeed())
	// The request is one-shot: the next reconciles (1s poll) keep the token and write nothing.
	rv := func(g Gomega) []string {
		var out []string
		for _, k := range releases {
			hr := &helmv2.HelmRelease{}
			g.Expect(pc.Get(ctx, k, hr)).To(Succeed())
			out = append(out, hr.ResourceVersion)
		}
		return out
	}
	before := rv(g)
	g.Consistently(rv).WithTimeout(3 * time.Second).Should(Equal(before))
	g.Expect(tokens(g)).To(Equal(got))
}

// testRenewalDespiteInputErrors moves the provider's clock past the renewal point while the
// OtelOperator's input is bad (version not offered) and while the ProviderConfig is missing: the
// operator's CP token is renewed in both cases, and the status keeps reporting the input problem.
func testRenewalDespiteInputErrors(t *testing.T, ctx context.Context, key client.ObjectKey, wlNS string, cfg *spv1alpha1.ProviderConfig) {
	oc, pc, wl := world.Onboarding.Client, world.Platform.Client, world.Workload.Client
	secretKey := client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}
	holder := func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(wl.Get(ctx, secretKey, s)).To(Succeed())
		return s.Annotations[cpaccess.HolderAnnotation]
	}
	// TTL 10m renews with less than 5m left; 6m ahead of a fresh token is past that point.
	advance := func() { clockOffset.Store(int64(6 * time.Minute)) }
	defer clockOffset.Store(0)
	expectRenewed := func(t *testing.T, phase spv1alpha1.Phase, reason, msg string, nudge func(Gomega)) {
		g := newG(t)
		clockOffset.Store(0)
		h := holder(g)
		// Positive control: at the real time the token is not due, so nothing renews it.
		g.Consistently(func(g Gomega) string {
			nudge(g)
			return holder(g)
		}).WithTimeout(2 * time.Second).WithPolling(500 * time.Millisecond).Should(Equal(h))
		advance()
		g.Eventually(func(g Gomega) string {
			nudge(g)
			return holder(g)
		}).ShouldNot(Equal(h), "the token was not renewed")
		clockOffset.Store(0)
		expectStatus(t, ctx, key, phase, reason, msg)
	}

	t.Run("version not offered", func(t *testing.T) {
		g := newG(t)
		o := &spv1alpha1.OtelOperator{}
		g.Expect(oc.Get(ctx, key, o)).To(Succeed())
		o.Spec.Version = "9.9.9"
		g.Expect(oc.Update(ctx, o)).To(Succeed())
		expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonVersionNotAllowed, `spec.version "9.9.9" is not offered`)
		// The 1s poll interval brings reconciles.
		expectRenewed(t, spv1alpha1.PhaseFailed, spv1alpha1.ReasonVersionNotAllowed, `spec.version "9.9.9" is not offered`, func(Gomega) {})
		g.Expect(oc.Get(ctx, key, o)).To(Succeed())
		o.Spec.Version = "0.20.8"
		g.Expect(oc.Update(ctx, o)).To(Succeed())
		expectStatus(t, ctx, key, spv1alpha1.PhaseReady, spv1alpha1.ReasonReconcileSuccess, "")
	})

	t.Run("ProviderConfig missing", func(t *testing.T) {
		g := newG(t)
		saved := &spv1alpha1.ProviderConfig{}
		g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(cfg), saved)).To(Succeed())
		g.Expect(pc.Delete(ctx, saved)).To(Succeed())
		expectStatus(t, ctx, key, spv1alpha1.PhaseProgressing, spv1alpha1.ReasonProviderConfigMissing, `no provider configuration named "otel-operator"`)
		n := 0
		// Without a ProviderConfig there is no poll interval (upkeep runs every minute): a label
		// change brings a reconcile sooner.
		nudge := func(g Gomega) {
			n++
			o := &spv1alpha1.OtelOperator{}
			g.Expect(oc.Get(ctx, key, o)).To(Succeed())
			if o.Labels == nil {
				o.Labels = map[string]string{}
			}
			o.Labels["test-nudge"] = time.Now().Format("150405.000")
			g.Expect(oc.Update(ctx, o)).To(Succeed())
		}
		expectRenewed(t, spv1alpha1.PhaseProgressing, spv1alpha1.ReasonProviderConfigMissing, `no provider configuration named "otel-operator"`, nudge)
		g.Expect(n).To(BeNumerically(">", 0))
		restored := &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: saved.Name}, Spec: saved.Spec}
		g.Expect(pc.Create(ctx, restored)).To(Succeed())
		expectStatus(t, ctx, key, spv1alpha1.PhaseReady, spv1alpha1.ReasonReconcileSuccess, "")
	})
}

// testProviderCPRights uses the provider's own CP credentials (the mcp AccessRequest's kubeconfig,
// which Flux uses for the CRDs release too): it can mint the operator's token and read Secrets in
// the operator's namespace (positive controls), and nothing of the kind elsewhere. (It holds the
// operator's ClusterRole rules, which it grants, RBAC objects among them.)
func testProviderCPRights(t *testing.T, ctx context.Context, platformNS, name string) {
	g := newG(t)
	ar := &clustersv1alpha1.AccessRequest{}
	g.Expect(world.Platform.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: providerName + "--" + name + "--mcp"}, ar)).To(Succeed())
	sec := &corev1.Secret{}
	g.Expect(world.Platform.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: ar.Status.SecretRef.Name}, sec)).To(Succeed())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	token := func(sa string) error {
		return c.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: instance.CPNamespace}},
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}})
	}
	g.Expect(token(instance.CPServiceAccount)).To(Succeed(), "the operator's token")
	g.Expect(c.List(ctx, &corev1.SecretList{}, client.InNamespace(instance.CPNamespace))).To(Succeed())

	// Another ServiceAccount in the same namespace (envtest runs no controller that would make
	// "default"): its token is refused before the API server looks it up.
	other := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "someone-else", Namespace: instance.CPNamespace}}
	g.Expect(client.IgnoreAlreadyExists(world.CP.Client.Create(ctx, other))).To(Succeed())
	defer func() { g.Expect(world.CP.Client.Delete(ctx, other)).To(Succeed()) }()
	g.Expect(token(other.Name)).To(Satisfy(apierrors.IsForbidden), "another ServiceAccount's token")
	g.Expect(c.List(ctx, &corev1.SecretList{})).To(Satisfy(apierrors.IsForbidden), "Secrets cluster-wide")
	g.Expect(c.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system"))).To(Satisfy(apierrors.IsForbidden), "Secrets in kube-system")
	g.Expect(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, client.DryRunAll)).To(Satisfy(apierrors.IsForbidden), "another namespace")
	g.Expect(c.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: instance.CPClusterRole}}, client.DryRunAll)).To(Succeed(), "its own ClusterRole (dry run)")
}
