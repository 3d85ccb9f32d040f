package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
)

const timeout = 90 * time.Second

func namespace(t *testing.T) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// create applies a manifest as a user would (unstructured: the webhook fills in the defaults),
// retrying while the webhook's certificate is being injected.
func create(g Gomega, ns, manifest string) {
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(manifest), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	g.Eventually(func() error {
		return k8s.Create(context.Background(), u.DeepCopy())
	}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
}

func ready(g Gomega, ns, name string) *metav1.Condition {
	col := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, col)).To(Succeed())
	c := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
	g.Expect(c).NotTo(BeNil())
	return c
}

const deploymentCollector = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: simple
spec:
  replicas: 2
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
          http: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`

// TestDeploymentCollectorBecomesReadyAndReportsUnschedulablePods: the collector is Ready once its
// pods run on the fake nodes; moved to a node selector no node matches, it turns Ready=False with a
// reason while the old pods keep serving.
func TestDeploymentCollectorBecomesReadyAndReportsUnschedulablePods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	create(g, ns, deploymentCollector)

	g.Eventually(func(g Gomega) {
		c := ready(g, ns, "simple")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "simple"}, col)).To(Succeed())
		g.Expect(col.Status.Scale.StatusReplicas).To(Equal("2/2"))
		g.Expect(col.Spec.UpgradeStrategy).To(Equal(v1beta1.UpgradeStrategyAutomatic), "defaulted by the webhook")
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())

	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	g.Expect(pods.Items).To(HaveLen(2))
	for _, p := range pods.Items {
		g.Expect(p.Status.PodIP).To(HavePrefix("127."))
	}

	col := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "simple"}, col)).To(Succeed())
	col.Spec.NodeSelector = map[string]string{"topology.example.test/zone": "nowhere"}
	g.Expect(k8s.Update(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := ready(g, ns, "simple")
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonProgressing))
		g.Expect(c.Message).To(ContainSubstring("rolling out"))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())

	// Back to schedulable: Ready again.
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "simple"}, col)).To(Succeed())
	col.Spec.NodeSelector = nil
	g.Expect(k8s.Update(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(ready(g, ns, "simple").Status).To(Equal(metav1.ConditionTrue))
		dep := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "simple-collector"}, dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.NodeSelector).To(BeEmpty())
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
}

// TestV1alpha1CollectorIsServedAsV1beta1 goes through the real conversion webhook.
func TestV1alpha1CollectorIsServedAsV1beta1(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	create(g, ns, `
apiVersion: opentelemetry.io/v1alpha1
kind: OpenTelemetryCollector
metadata:
  name: legacy
spec:
  mode: daemonset
  config: |
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        metrics:
          receivers: [otlp]
          exporters: [debug]
`)
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "legacy"}, col)).To(Succeed())
		g.Expect(col.Spec.Mode).To(Equal(v1beta1.ModeDaemonSet))
		g.Expect(col.Spec.Config.Receivers.Object).To(HaveKey("otlp"))
		g.Expect(ready(g, ns, "legacy").Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	ds := &appsv1.DaemonSet{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "legacy-collector"}, ds)).To(Succeed())
	g.Expect(ds.Status.NumberAvailable).To(Equal(int32(3)), "one pod per fake node")
}

// TestInvalidCollectorIsRejectedWithEveryPath goes through the real validating webhook.
func TestInvalidCollectorIsRejectedWithEveryPath(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(`
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: broken
spec:
  config:
    receivers:
      otlp: {protocols: {grpc: {}}}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp, zipkin], exporters: [debug, otlp/missing]}
`), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	var err error
	g.Eventually(func() bool {
		err = k8s.Create(context.Background(), u.DeepCopy())
		return err != nil && !isWebhookUnavailable(err)
	}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring("spec.config.service.pipelines.traces.receivers[1]"))
	g.Expect(err.Error()).To(ContainSubstring("spec.config.service.pipelines.traces.exporters[1]"))
}
