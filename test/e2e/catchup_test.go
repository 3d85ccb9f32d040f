package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// TestInstrumentationCatchesUp is upstream's #1329/#3489 on the simulated cluster: a Deployment
// created before its Instrumentation runs uninstrumented pods. The operator reports it pending
// (status and a Warning Event), touches nothing until the Instrumentation opts in, then restarts
// it like `kubectl rollout restart`; the new pods go through the pod webhook, carry the
// injection record, and the status goes to 0 pending.
func TestInstrumentationCatchesUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	labels := map[string]string{"app": "legacy"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels,
					Annotations: map[string]string{inst.InjectAnnotation(inst.Java): "true"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "legacy", Image: "example.invalid/legacy:1"}}},
			},
		},
	}
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	available := func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(2)))
		g.Expect(d.Status.Replicas).To(Equal(int32(2)))
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}
	g.Eventually(available).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())

	// The Instrumentation arrives after the pods: they are pending.
	create(g, ns, `
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: java
spec:
  exporter:
    endpoint: http://collector:4318
  java:
    image: example.invalid/autoinstrumentation-java:2.10.0
`)
	status := func(g Gomega) *v1alpha1.InstrumentationWorkloads {
		in := &v1alpha1.Instrumentation{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "java"}, in)).To(Succeed())
		return in.Status.Workloads
	}
	g.Eventually(status).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(&v1alpha1.InstrumentationWorkloads{
		Pending: 1, PendingWorkloads: []v1alpha1.PendingWorkload{{Kind: "Deployment", Namespace: ns, Name: "legacy", Reason: ctrlinst.ReasonNotInjected}},
	}))
	g.Eventually(func(g Gomega) []string { return eventReasons(g, ns) }).WithTimeout(30 * time.Second).
		Should(ContainElement(ctrlinst.EventWorkloadsPending))

	// No opt-in: nothing is restarted.
	time.Sleep(3 * scanInterval)
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
	g.Expect(dep.Spec.Template.Annotations).NotTo(HaveKey(ctrlinst.RestartedAtAnnotation))

	// Opt in: the operator restarts it; the new pods are instrumented by the webhook.
	in := &v1alpha1.Instrumentation{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "java"}, in)).To(Succeed())
	patch := client.MergeFrom(in.DeepCopy())
	in.Annotations = map[string]string{ctrlinst.RestartOptInAnnotation: "true"}
	g.Expect(k8s.Patch(ctx, in, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Annotations).To(HaveKey(ctrlinst.RestartedAtAnnotation))
		g.Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue(ctrlinst.RestartedForAnnotation, "java="+ns+"/java@1"))
	}).WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return eventReasons(g, ns) }).WithTimeout(30 * time.Second).
		Should(ContainElement(ctrlinst.EventWorkloadRestarted))

	g.Eventually(func(g Gomega) {
		available(g)
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		live := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			live++
			g.Expect(p.Annotations).To(HaveKeyWithValue(inst.InjectedAnnotation, "java="+ns+"/java@1"), p.Name)
		}
		g.Expect(live).To(Equal(2))
	}).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Eventually(status).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(
		&v1alpha1.InstrumentationWorkloads{Instrumented: 1}))
	g.Eventually(func(g Gomega) []string { return eventReasons(g, ns) }).WithTimeout(30 * time.Second).
		Should(ContainElement(ctrlinst.EventWorkloadsInstrumented))
	// Restarted once only.
	restarts := 0
	for _, r := range eventReasons(g, ns) {
		if r == ctrlinst.EventWorkloadRestarted {
			restarts++
		}
	}
	g.Expect(restarts).To(Equal(1))
}

// eventReasons lists the reasons of the Events about Instrumentations in ns.
func eventReasons(g Gomega, ns string) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if strings.EqualFold(e.Regarding.Kind, "Instrumentation") {
			out = append(out, e.Reason)
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
