package realnode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/test/realnode"
)

// create applies a manifest as a user would (unstructured: the webhook fills in the defaults).
// While the admission webhook cannot be called yet (its CA bundle not injected, its server not
// listening), the create is retried until it answers, for up to 60 s; the webhook's answer (the
// object stored, or a refusal) is returned as is, and so is the last error at the deadline.
func create(ns, manifest string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		return err
	}
	u.SetNamespace(ns)
	var err error
	waitErr := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true,
		func(ctx context.Context) (bool, error) {
			err = k8s.Create(ctx, u.DeepCopy())
			return err == nil || !webhookUnavailable(err), nil
		})
	if err == nil && waitErr != nil {
		return waitErr
	}
	return err
}

// webhookUnavailable reports an admission call that failed because the webhook is not serving yet
// (its CA bundle not injected), as opposed to a webhook that answered with a refusal.
func webhookUnavailable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "failed calling webhook") || strings.Contains(s, "x509") ||
		strings.Contains(s, "connection refused")
}

func readyCondition(g Gomega, ns, name string) *metav1.Condition {
	col := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, col)).To(Succeed())
	c := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
	g.Expect(c).NotTo(BeNil())
	return c
}

// expectWarning waits (up to 30 s) for a Warning Event with reason about the collector name.
func expectWarning(g Gomega, ns, name, reason string) {
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(ContainElement(And(HaveField("Reason", reason),
			HaveField("Type", "Warning"), HaveField("Regarding.Name", name))))
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
}

// awaitSidecarWebhook waits until the pod webhook injects the sidecar collector named injected
// ("<namespace>.<name>") into a pod of namespace ns that asks for one. The webhook reads
// collectors from the operator's informer cache, which sees a new collector some time after the
// API server stored it; a pod created before then runs without its sidecar. Each probe is a
// dry-run create through the API server and its admission chain: nothing is stored or scheduled.
func awaitSidecarWebhook(g Gomega, ns, injected string) {
	g.Eventually(func(g Gomega) {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe", Namespace: ns,
				Annotations: map[string]string{"sidecar.opentelemetry.io/inject": "true"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: realnode.OTLPAppImage}}},
		}
		g.Expect(k8s.Create(context.Background(), probe, client.DryRunAll)).To(Succeed())
		g.Expect(probe.Labels).To(HaveKeyWithValue("sidecar.opentelemetry.io/injected", injected))
	}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(),
		"the pod webhook never injected the sidecar into a dry-run pod")
}

// TestDeploymentCollectorIsReadyBecauseItsHealthCheckAnswers: a deployment-mode collector with the
// health_check extension runs the config the operator generated; the kubelet's readiness probe
// (derived by the operator from the extension) really reaches the collector, the pod turns Ready,
// and so does the collector's status.
func TestDeploymentCollectorIsReadyBecauseItsHealthCheckAnswers(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	g.Expect(create(ns, `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: gateway
spec:
  config:
    extensions:
      health_check: {}
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      extensions: [health_check]
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`)).To(Succeed())

	g.Eventually(func(g Gomega) {
		c := readyCondition(g, ns, "gateway")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())

	// The container is ready through its probe. On a loaded machine one probe may time out right
	// after the collector turned Ready, so the state is awaited rather than read once.
	var pod corev1.Pod
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		pod = pods.Items[0]
		g.Expect(pod.Status.ContainerStatuses).To(ConsistOf(And(
			HaveField("Ready", BeTrue()), HaveField("RestartCount", BeZero()))))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	container := pod.Spec.Containers[0]
	g.Expect(container.Image).To(Equal(realnode.CollectorImage))
	g.Expect(container.ReadinessProbe).NotTo(BeNil(), "the operator derives a readiness probe from health_check")
	g.Expect(container.ReadinessProbe.HTTPGet.Port.IntValue()).To(Equal(13133))
	logs, err := podLogs(ctx, ns, pod.Name, container.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(logs).To(ContainSubstring("Everything is ready"))
}

// TestSidecarReceivesOTLPFromItsPod: a pod annotated for injection gets the namespace's sidecar
// collector; the app in the pod sends spans to localhost:4317 and the sidecar's debug exporter
// prints them, read back from the sidecar's container log.
func TestSidecarReceivesOTLPFromItsPod(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	g.Expect(create(ns, `
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
      debug:
        verbosity: detailed
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`)).To(Succeed())
	// The pod webhook must see the collector in its cache before the pod is created.
	awaitSidecarWebhook(g, ns, ns+".sidecar")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns,
			Annotations: map[string]string{"sidecar.opentelemetry.io/inject": "true"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "shop", Image: realnode.OTLPAppImage,
			Env: []corev1.EnvVar{{Name: "SPAN_NAME", Value: "checkout-from-shop"}},
		}}},
	}
	g.Expect(k8s.Create(ctx, pod)).To(Succeed())
	g.Expect(pod.Spec.InitContainers).To(ContainElement(HaveField("Name", "otc-container")), "sidecar injected")

	g.Eventually(func(g Gomega) {
		logs, err := podLogs(ctx, ns, "shop", "otc-container")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(logs).To(ContainSubstring("checkout-from-shop"))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	logs, err := podLogs(ctx, ns, "shop", "shop")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(logs).To(ContainSubstring(`exported span "checkout-from-shop"`))
}
