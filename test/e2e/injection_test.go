package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPodsAreInstrumentedOrTold goes through the operator (as its ServiceAccount, with the shipped
// RBAC): the pods of a Deployment asking for Java get the agent and the otelop.io/instrumented
// record and become available; a Deployment asking for an Instrumentation that does not exist
// runs uninstrumented, and a Warning Event on it says why.
func TestPodsAreInstrumentedOrTold(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	create(g, ns, `
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: otel
spec:
  exporter:
    endpoint: http://collector:4318
  java:
    image: example.invalid/javaagent:2
`)
	deployment := func(name, inst string) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels,
						Annotations: map[string]string{"instrumentation.opentelemetry.io/inject-java": inst}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
				},
			},
		}
	}
	// The Instrumentation must be in the webhook's cache before the pods are created.
	awaitPodWebhook(g, ns, map[string]string{"instrumentation.opentelemetry.io/inject-java": "true"},
		HaveField("Annotations", HaveKeyWithValue("otelop.io/instrumented", "java="+ns+"/otel@1")))
	shop, other := deployment("shop", "true"), deployment("other", "missing")
	g.Expect(k8s.Create(ctx, shop)).To(Succeed())
	g.Expect(k8s.Create(ctx, other)).To(Succeed())
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "shop"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		p := pods.Items[0]
		g.Expect(p.Spec.InitContainers).To(ContainElement(HaveField("Name", "opentelemetry-auto-instrumentation-java")))
		g.Expect(p.Annotations).To(HaveKeyWithValue("otelop.io/instrumented", "java="+ns+"/otel@1"))
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(shop), d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(1)))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "other"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		g.Expect(pods.Items[0].Spec.InitContainers).To(BeEmpty())
		events := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(
			HaveField("Reason", "InstrumentationNotInjected"),
			HaveField("Regarding.Kind", "Deployment"),
			HaveField("Regarding.Name", "other"),
			HaveField("Note", ContainSubstring("Instrumentation "+ns+"/missing not found")),
		)))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
}
