package controller

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/openmcp-project/controller-utils/pkg/clusters"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// TestFailedHandOverRevokesTheMintedToken: when the access Secret cannot be written into the
// workload cluster (here an admission policy denies it, on a real API server that serves as both
// the control plane and the workload cluster), the token minted for it is revoked at once:
// retries leave no valid token of the operator's ServiceAccount behind. Positive control: once
// the write is allowed, exactly one holder (the one in the Secret) remains.
func TestFailedHandOverRevokesTheMintedToken(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start(testenv.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	c, id := env.Client, instance.ID("tenant", "cp")
	wlNS := instance.WorkloadNamespace(id)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: instance.CPNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: instance.CPServiceAccount, Namespace: instance.CPNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: wlNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "probe"}},
	} {
		g.Expect(c.Create(ctx, o)).To(Succeed())
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-access-secret"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.metadata.name != '" + instance.CPAccessSecret + "'", Message: "access secrets are blocked"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "no-access-secret"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	g.Expect(c.Create(ctx, policy)).To(Succeed())
	g.Expect(c.Create(ctx, binding)).To(Succeed())
	// The policy is in force once a probe Secret of that name is denied.
	probeDenied := func() bool {
		probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: instance.CPAccessSecret, Namespace: "probe"}}
		if err := c.Create(ctx, probe); err != nil {
			return apierrors.IsInvalid(err) || apierrors.IsForbidden(err)
		}
		g.Expect(c.Delete(ctx, probe)).To(Succeed())
		return false
	}
	g.Eventually(probeDenied).WithTimeout(time.Minute).Should(BeTrue())

	cluster := clusters.New("both").WithRESTConfig(env.Config)
	g.Expect(cluster.InitializeClient(env.Client.Scheme())).To(Succeed())
	cc := apireconciler.ClusterContext{MCP: cluster, Workload: cluster}
	s := &Service{Rotation: cpaccess.Rotation{TTL: 10 * time.Minute}}
	holders := func() []string {
		var list corev1.SecretList
		g.Expect(c.List(ctx, &list, client.InNamespace(instance.CPNamespace), client.MatchingLabels{cpaccess.HolderLabel: "true", instance.InstanceLabel: id})).To(Succeed())
		var out []string
		for _, h := range list.Items {
			out = append(out, h.Name)
		}
		return out
	}
	for range 3 {
		g.Expect(s.reconcileAccessSecret(ctx, cc, id, wlNS)).To(MatchError(ContainSubstring("access secrets are blocked")))
	}
	g.Expect(holders()).To(BeEmpty(), "a token was minted and never handed over, yet it is still valid")

	g.Expect(c.Delete(ctx, binding)).To(Succeed())
	g.Eventually(probeDenied).WithTimeout(time.Minute).Should(BeFalse())
	g.Expect(s.reconcileAccessSecret(ctx, cc, id, wlNS)).To(Succeed())
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, secret)).To(Succeed())
	g.Expect(holders()).To(Equal([]string{secret.Annotations[cpaccess.HolderAnnotation]}))
}
