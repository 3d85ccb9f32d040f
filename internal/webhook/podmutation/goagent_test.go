package podmutation_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// labelNamespace sets the Go agent opt-in label on ns and waits until the webhook's namespace
// informer shows it.
func labelNamespace(t testing.TB, ns string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	cur := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels[instrumentation.GoAgentNamespaceLabel] = "true"
	g.Expect(env.Client.Patch(ctx, cur, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		m := podmutation.NamespaceMetadata()
		g.Expect(mgr.GetCache().Get(ctx, client.ObjectKey{Name: ns}, m)).To(Succeed())
		g.Expect(m.Labels).To(HaveKeyWithValue(instrumentation.GoAgentNamespaceLabel, "true"))
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())
}

// privileged lists the containers of pod (init containers included) that run privileged or as
// root.
func privileged(pod *corev1.Pod) []string {
	var out []string
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		sc := c.SecurityContext
		if sc != nil && (ptr.Deref(sc.Privileged, false) || ptr.Deref(sc.RunAsUser, -1) == 0) {
			out = append(out, c.Name)
		}
	}
	return out
}

// TestGoAgentNeedsNamespaceOptIn is the attack of issue 29, finding 6, with Go instrumentation
// enabled (as TestMain's manager has it): a pod of a namespace no administrator opted in asks
// for the Go agent, with its tenant's own Instrumentation, and the old webhook added a privileged
// root container with the node's /sys/kernel/debug. Now it is admitted without it, with a
// warning naming the label. A pod of an opted-in namespace naming another namespace's
// Instrumentation (whose spec.go.securityContext is what the agent would run with) gets nothing
// without that Instrumentation's consent. Positive controls: in the labelled namespace its own
// Instrumentation injects the privileged agent, and once the other namespace consents its
// security context is the agent's.
func TestGoAgentNeedsNamespaceOptIn(t *testing.T) {
	g := NewWithT(t)
	tenant := newNamespace(t, "go-tenant", nil)
	optedIn := newNamespace(t, "go-opted-in", nil)
	provider := newNamespace(t, "go-provider", nil)
	ask := func(value string) map[string]string {
		return map[string]string{instrumentation.InjectAnnotation(instrumentation.Go): value, instrumentation.GoTargetExeAnnotation: "/app"}
	}
	newInstrumentation(t, tenant, "otel")
	newInstrumentation(t, optedIn, "otel")
	providerSC := &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), Privileged: ptr.To(true),
		Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
	providerInst := newInstrumentation(t, provider, "otel", func(in *v1alpha1.Instrumentation) {
		in.Spec.Go.SecurityContext = providerSC
	})

	// The attack: the tenant's namespace is not labelled.
	got, warnings := create(t, newPod(tenant, "attack", ask("true")))
	expectUnchanged(g, got)
	g.Expect(privileged(got)).To(BeEmpty())
	g.Expect(got.Spec.Volumes).NotTo(ContainElement(HaveField("Name", "kernel-debug")))
	g.Expect(got.Annotations).NotTo(HaveKey(instrumentation.InjectedAnnotation))
	g.Expect(warnings).To(ConsistOf(And(ContainSubstring("go instrumentation not injected"),
		ContainSubstring(instrumentation.GoAgentNamespaceLabel+"=true"), ContainSubstring(`"`+tenant+`"`))))

	// A labelled namespace naming another namespace's Instrumentation without its consent.
	labelNamespace(t, optedIn)
	got, warnings = create(t, newPod(optedIn, "foreign", ask(provider+"/otel")))
	expectUnchanged(g, got)
	g.Expect(privileged(got)).To(BeEmpty())
	g.Expect(warnings).To(ConsistOf(ContainSubstring("does not allow pods of namespace \"" + optedIn + "\"")))

	// Control: the labelled namespace's own Instrumentation injects the agent, privileged, as root.
	got, warnings = create(t, newPod(optedIn, "own", ask("true")))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(names(got.Spec.Containers)).To(Equal([]string{"app", instrumentation.AgentName}))
	g.Expect(privileged(got)).To(Equal([]string{instrumentation.AgentName}))

	// Control: with the provider's consent its security context is the agent's.
	setAllowed(t, providerInst, optedIn)
	got, warnings = create(t, newPod(optedIn, "consented", ask(provider+"/otel")))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(got.Spec.Containers).To(HaveLen(2))
	g.Expect(got.Spec.Containers[1].SecurityContext).To(Equal(providerSC))

	// Consent of the Instrumentation does not replace the namespace's label.
	setAllowed(t, providerInst, "*")
	got, _ = create(t, newPod(tenant, "consented-unlabelled", ask(provider+"/otel")))
	expectUnchanged(g, got)
	g.Expect(privileged(got)).To(BeEmpty())
}
