package podmutation_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/instrumentation"
)

// apiKey is a credential in the provider namespace's Instrumentation env.
const apiKey = "x-api-key=tenant-b-s3cret-29"

// TestCrossNamespaceInstrumentationNeedsConsent is the attack of issue 29, finding 2: a pod of
// namespace A names B's Instrumentation ("B/otel"). Without B's consent the old webhook copied B's
// env (an API-key header), endpoint and images into A's pod; now the pod is admitted unchanged
// with a warning that names the annotation B must set. Positive controls: once B lists A in
// instrumentation.opentelemetry.io/allowed-namespaces the same pod is instrumented with B's env,
// and "*" allows every namespace; a pod of B itself never needed consent.
func TestCrossNamespaceInstrumentationNeedsConsent(t *testing.T) {
	g := NewWithT(t)
	tenantA := newNamespace(t, "consent-a", nil)
	tenantB := newNamespace(t, "consent-b", nil)
	other := newNamespace(t, "consent-c", nil)
	inst := newInstrumentation(t, tenantB, "otel", func(in *v1alpha1.Instrumentation) {
		in.Spec.Env = append(in.Spec.Env, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_HEADERS", Value: apiKey})
	})
	ref := map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): tenantB + "/otel"}

	// The attack: no consent.
	got, warnings := create(t, newPod(tenantA, "take", ref))
	expectUnchanged(g, got)
	g.Expect(got.Annotations).NotTo(HaveKey(instrumentation.InjectedAnnotation))
	g.Expect(envValue(got.Spec.Containers[0], "OTEL_EXPORTER_OTLP_HEADERS")).To(BeEmpty(), "B's API key is not in A's pod")
	g.Expect(warnings).To(ConsistOf(And(
		ContainSubstring("Instrumentation "+tenantB+"/otel does not allow pods of namespace \""+tenantA+"\""),
		ContainSubstring(instrumentation.AllowedNamespacesAnnotation))))

	// Control: B's own pods need no consent.
	got, warnings = create(t, newPod(tenantB, "own", map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "otel"}))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(envValue(got.Spec.Containers[0], "OTEL_EXPORTER_OTLP_HEADERS")).To(Equal(apiKey))

	// Control: B consents to A (not to C).
	setAllowed(t, inst, tenantA)
	got, warnings = create(t, newPod(tenantA, "consented", ref))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(got.Annotations).To(HaveKey(instrumentation.InjectedAnnotation))
	g.Expect(envValue(got.Spec.Containers[0], "OTEL_EXPORTER_OTLP_HEADERS")).To(Equal(apiKey))
	got, warnings = create(t, newPod(other, "not-listed", ref))
	expectUnchanged(g, got)
	g.Expect(warnings).To(ConsistOf(ContainSubstring("does not allow pods of namespace \"" + other + "\"")))

	// Control: "*" allows every namespace.
	setAllowed(t, inst, " * ")
	got, warnings = create(t, newPod(other, "star", ref))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(envValue(got.Spec.Containers[0], "OTEL_EXPORTER_OTLP_HEADERS")).To(Equal(apiKey))
}

// setAllowed sets inst's allowed-namespaces annotation and waits until the manager's cache shows it.
func setAllowed(t *testing.T, inst *v1alpha1.Instrumentation, value string) {
	t.Helper()
	ctx := context.Background()
	cur := &v1alpha1.Instrumentation{}
	g := NewWithT(t)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(inst), cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[instrumentation.AllowedNamespacesAnnotation] = value
	g.Expect(env.Client.Patch(ctx, cur, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := &v1alpha1.Instrumentation{}
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(inst), c)).To(Succeed())
		g.Expect(c.Annotations[instrumentation.AllowedNamespacesAnnotation]).To(Equal(value))
	}).Should(Succeed())
}
