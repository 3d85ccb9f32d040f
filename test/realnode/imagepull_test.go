package realnode_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/test/realnode"
)

// TestImageThatCannotBePulled: a collector whose spec.image is not in the node's image store. The
// node's network namespace reaches no registry (and has no DNS server), so the kubelet's pull
// really fails, at once: the pod waits in ErrImagePull/ImagePullBackOff, and the collector's
// status says so (Ready=False and Stalled=True with reason ImagePullBackOff, naming the pod, the
// container, the image and the kubelet's message) with a Warning Event. With the image fixed the
// Deployment rolls out a pod that runs, and both conditions clear.
func TestImageThatCannotBePulled(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	const missing = "otelop.test/otelcol:does-not-exist"
	start := time.Now()
	g.Expect(create(ns, `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: typo
spec:
  image: `+missing+`
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
`)).To(Succeed())

	var podName string
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		podName = pods.Items[0].Name
		g.Expect(pods.Items[0].Status.ContainerStatuses).To(ConsistOf(HaveField("State.Waiting.Reason",
			BeElementOf("ErrImagePull", "ImagePullBackOff"))))
		c := readyCondition(g, ns, "typo")
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonImagePullBackOff), c.Message)
		g.Expect(c.Message).To(ContainSubstring(`pod ` + podName + `: container otc-container (image "` + missing + `") cannot start: `))
		g.Expect(c.Message).To(ContainSubstring(missing+`": `), "the kubelet's message follows")
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "typo"}, col)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(col.Status.Conditions, v1beta1.ConditionStalled)).To(BeTrue())
		t.Logf("after %s, status of the collector whose image cannot be pulled: Ready=%s reason=%s message=%q",
			time.Since(start).Round(time.Second), c.Status, c.Reason, c.Message)
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	expectWarning(g, ns, "typo", v1beta1.ReasonImagePullBackOff)

	// The image is fixed: a new pod runs, the old one goes, the collector is Ready again.
	fixed := time.Now()
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "typo"}, col)).To(Succeed())
		col.Spec.Image = realnode.CollectorImage
		g.Expect(k8s.Update(ctx, col)).To(Succeed())
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "typo"}, col)).To(Succeed())
		c := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		g.Expect(meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionStalled)).To(BeNil())
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	t.Logf("Ready %s after the image was fixed", time.Since(fixed).Round(time.Second))
}
