package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSidecarIsInjectedIntoAnnotatedPods goes through the operator's pod webhook: a Deployment
// whose pods ask for the namespace's sidecar collector gets it (as a native sidecar on 1.37) and
// its pods still become Ready on the fake nodes.
func TestSidecarIsInjectedIntoAnnotatedPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	create(g, ns, `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: sidecar
spec:
  mode: sidecar
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`)
	labels := map[string]string{"app": "shop"}
	replicas := int32(2)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels,
					Annotations: map[string]string{"sidecar.opentelemetry.io/inject": "true"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "shop", Image: "example.invalid/shop:1"}}},
			},
		},
	}
	// The collector must be in the webhook's cache before the pods are created.
	awaitPodWebhook(g, ns, map[string]string{"sidecar.opentelemetry.io/inject": "true"},
		HaveField("Labels", HaveKeyWithValue("sidecar.opentelemetry.io/injected", ns+".sidecar")))
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			g.Expect(p.Spec.InitContainers).To(ContainElement(HaveField("Name", "otc-container")))
			g.Expect(p.Labels).To(HaveKeyWithValue("sidecar.opentelemetry.io/injected", ns+".sidecar"))
		}
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
}
