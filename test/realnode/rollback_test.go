package realnode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/test/realnode"
)

// rollbackCollector is a collector opted in to automatic rollback whose debug exporter prints
// each span's name; verbosity is the debug exporter's (the collector refuses "loud" at start).
func rollbackCollector(name, mode, verbosity string) string {
	return `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: ` + name + `
  annotations:
    otelop.io/auto-rollback: "true"
spec:
  mode: ` + mode + `
  config:
    extensions:
      health_check: {}
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug:
        verbosity: ` + verbosity + `
    service:
      extensions: [health_check]
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`
}

// setVerbosity changes the collector's debug exporter verbosity (a new generation).
func setVerbosity(g Gomega, ns, name, verbosity string) {
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, col)).To(Succeed())
		col.Spec.Config.Exporters.Object["debug"] = map[string]any{"verbosity": verbosity}
		g.Expect(k8s.Update(ctx, col)).To(Succeed())
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
}

// collectorPods returns the collector's pods by name.
func collectorPods(g Gomega, ns, name string) map[string]corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(context.Background(), pods, client.InNamespace(ns),
		client.MatchingLabels{"app.kubernetes.io/instance": ns + "." + name})).To(Succeed())
	out := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		out[p.Name] = p
	}
	return out
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// expectRolledBack waits for the collector to report the rollback of generation from to to,
// naming the crash-looping container, and for one RolledBack Warning Event.
func expectRolledBack(g Gomega, ns, name, from, to string) {
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, col)).To(Succeed())
		ready := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(v1beta1.ReasonRolledBack), ready.Message)
		g.Expect(ready.Message).To(ContainSubstring("generation " + from + " rolled back to generation " + to))
		g.Expect(ready.Message).To(ContainSubstring("container otc-container is crash-looping"))
		g.Expect(meta.IsStatusConditionTrue(col.Status.Conditions, v1beta1.ConditionRolledBack)).To(BeTrue())
	}).WithTimeout(3 * timeout).WithPolling(time.Second).Should(Succeed())
	expectWarning(g, ns, name, v1beta1.ReasonRolledBack)
}

// TestRollbackOfADeploymentCollector: a Deployment collector opted in to automatic rollback is
// Ready and receives an app's spans at its pod; then a config the collector refuses at start
// (debug verbosity "loud") makes the new pod crash-loop. The operator restores the Ready
// generation's template and reports RolledBack; the pod of the last good generation never stopped:
// the app's spans keep reaching its debug exporter, before and after the rollback. Then a good
// config rolls out normally: a new pod, Ready, the RolledBack condition gone.
func TestRollbackOfADeploymentCollector(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	g.Expect(create(ns, rollbackCollector("gw", "deployment", "detailed"))).To(Succeed())
	var good corev1.Pod
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, ns, "gw").Status).To(Equal(metav1.ConditionTrue))
		pods := collectorPods(g, ns, "gw")
		g.Expect(pods).To(HaveLen(1))
		for _, p := range pods {
			good = p
		}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw-collector-last-ready"}, &corev1.ConfigMap{})).To(Succeed())
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(good.Status.PodIP).NotTo(BeEmpty())

	// The app sends a span a second to the good pod's OTLP port.
	app := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: realnode.OTLPAppImage, ImagePullPolicy: corev1.PullNever,
			Env: []corev1.EnvVar{{Name: "OTLP_ENDPOINT", Value: good.Status.PodIP + ":4317"}, {Name: "SPAN_NAME", Value: "kept-path"}},
		}}},
	}
	g.Expect(k8s.Create(ctx, app)).To(Succeed())
	spans := func(g Gomega) int {
		logs, err := podLogs(ctx, ns, good.Name, "otc-container")
		g.Expect(err).NotTo(HaveOccurred())
		return strings.Count(logs, "kept-path")
	}
	g.Eventually(spans).WithTimeout(timeout).WithPolling(time.Second).Should(BeNumerically(">", 0))

	setVerbosity(g, ns, "gw", "loud")
	expectRolledBack(g, ns, "gw", "2", "1")
	// Positive control of the failure: a pod of generation 2 did crash.
	// (It may already be gone; the status message named it, checked above.)

	// The good pod never stopped, still Ready, and still gets the app's spans.
	before := spans(g)
	g.Eventually(func(g Gomega) {
		pods := collectorPods(g, ns, "gw")
		p, ok := pods[good.Name]
		g.Expect(ok).To(BeTrue(), "the last good generation's pod is still there")
		g.Expect(podReady(p)).To(BeTrue())
		g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeZero())
		g.Expect(pods).To(HaveLen(1), "the failing generation's pods are gone")
		g.Expect(spans(g)).To(BeNumerically(">", before))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())

	// A good config rolls out normally.
	setVerbosity(g, ns, "gw", "basic")
	g.Eventually(func(g Gomega) {
		c := readyCondition(g, ns, "gw")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw"}, col)).To(Succeed())
		g.Expect(c.ObservedGeneration).To(Equal(col.Generation))
		g.Expect(meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionRolledBack)).To(BeNil())
		pods := collectorPods(g, ns, "gw")
		g.Expect(pods).NotTo(HaveKey(good.Name), "generation 3 rolled the pod")
	}).WithTimeout(2 * timeout).WithPolling(time.Second).Should(Succeed())
}

// TestRollbackOfADaemonSetCollector: the same for a DaemonSet collector on the one node: its pod
// is replaced by the failing generation's (maxUnavailable 1), which crash-loops; the operator
// restores the Ready generation and the node's collector runs and is Ready again with the old
// config, while the collector reports RolledBack. Then a good config rolls out normally.
func TestRollbackOfADaemonSetCollector(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	g.Expect(create(ns, rollbackCollector("agent", "daemonset", "detailed"))).To(Succeed())
	var goodTemplate string
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, ns, "agent").Status).To(Equal(metav1.ConditionTrue))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "agent-collector-last-ready"}, &corev1.ConfigMap{})).To(Succeed())
		ds := &appsv1.DaemonSet{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "agent-collector"}, ds)).To(Succeed())
		goodTemplate = configVolume(ds.Spec.Template)
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())

	setVerbosity(g, ns, "agent", "loud")
	expectRolledBack(g, ns, "agent", "2", "1")
	g.Eventually(func(g Gomega) {
		ds := &appsv1.DaemonSet{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "agent-collector"}, ds)).To(Succeed())
		g.Expect(configVolume(ds.Spec.Template)).To(Equal(goodTemplate))
		pods := collectorPods(g, ns, "agent")
		g.Expect(pods).To(HaveLen(1))
		for _, p := range pods {
			g.Expect(podReady(p)).To(BeTrue(), "the node's collector runs the last good config again")
			g.Expect(configVolume(corev1.PodTemplateSpec{Spec: p.Spec})).To(Equal(goodTemplate))
		}
	}).WithTimeout(2 * timeout).WithPolling(time.Second).Should(Succeed())

	// A good config rolls out normally and is Ready at its generation.
	setVerbosity(g, ns, "agent", "basic")
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "agent"}, col)).To(Succeed())
		c := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		g.Expect(c.ObservedGeneration).To(Equal(col.Generation))
		g.Expect(meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionRolledBack)).To(BeNil())
		ds := &appsv1.DaemonSet{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "agent-collector"}, ds)).To(Succeed())
		g.Expect(configVolume(ds.Spec.Template)).NotTo(Equal(goodTemplate))
	}).WithTimeout(2 * timeout).WithPolling(time.Second).Should(Succeed())
}

// configVolume returns the config ConfigMap a pod template mounts.
func configVolume(tmpl corev1.PodTemplateSpec) string {
	for _, v := range tmpl.Spec.Volumes {
		if v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}
