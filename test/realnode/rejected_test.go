package realnode_test

import (
	"context"
	"fmt"
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

// TestConfigTheCollectorRejects: a pipeline naming an exporter that is not configured is refused
// by our admission webhook, naming the field; a config that only the collector itself can judge
// (an unknown debug exporter verbosity) is admitted, and then the crash is visible: the container
// restarts with the collector's error in its log, and the collector's status says it is
// crash-looping (reason CrashLoopBackOff, naming the pod, the container and the exit code).
func TestConfigTheCollectorRejects(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)

	err := create(ns, `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: dangling
spec:
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [otlphttp]}
`)
	g.Expect(err).To(HaveOccurred(), "admission must refuse a pipeline naming an unconfigured exporter")
	g.Expect(err.Error()).To(ContainSubstring("otlphttp"))
	t.Logf("admission refused the dangling exporter: %v", err)

	g.Expect(create(ns, `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: loud
spec:
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug:
        verbosity: loud
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`)).To(Succeed(), "only the collector knows the debug exporter's verbosity values")

	// The container restarts with the collector's error in its log. The kubelet keeps only the
	// last dead container and replaces it on every restart, so a read can race with that: retry.
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		pod := pods.Items[0]
		g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		st := pod.Status.ContainerStatuses[0]
		g.Expect(st.RestartCount).To(BeNumerically(">=", 1), "the collector exits at start")
		g.Expect(st.LastTerminationState.Terminated).NotTo(BeNil())
		g.Expect(st.LastTerminationState.Terminated.ExitCode).NotTo(BeZero())
		logs, err := cluster.Clientset.CoreV1().Pods(ns).GetLogs(pod.Name,
			&corev1.PodLogOptions{Container: pod.Spec.Containers[0].Name, Previous: true}).DoRaw(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(logs)).To(ContainSubstring("loud"))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())

	// The collector's status names the crash: Ready=False and Stalled=True with reason
	// CrashLoopBackOff, the pod, the container and the exit code in the message, and a Warning
	// Event. (Between crashes the container runs for a moment; with no readiness probe the
	// Deployment counts it available then, and Ready may be True briefly.)
	var podName string
	var exitCode int32
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		podName = pods.Items[0].Name
		exitCode = pods.Items[0].Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode
		c := readyCondition(g, ns, "loud")
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonCrashLoopBackOff))
		g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("pod %s: container otc-container is crash-looping, last exit code %d",
			podName, exitCode)))
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "loud"}, col)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(col.Status.Conditions, v1beta1.ConditionStalled)).To(BeTrue())
		t.Logf("status of the crash-looping collector: Ready=%s reason=%s message=%q", c.Status, c.Reason, c.Message)
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	expectWarning(g, ns, "loud", v1beta1.ReasonCrashLoopBackOff)
}
