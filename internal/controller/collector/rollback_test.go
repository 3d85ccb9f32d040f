package collector_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
)

// configMapOf returns the name of the collector config ConfigMap a workload's pods mount.
func configMapOf(tmpl corev1.PodTemplateSpec) string {
	for _, v := range tmpl.Spec.Volumes {
		if v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// readyAt makes the collector's Deployment available at its current template and waits for the
// collector to be Ready and its last-Ready record to hold its generation; it returns the config
// ConfigMap the Ready pods mount.
func readyAt(g Gomega, ns, name string) string {
	setAvailable(g, ns, name+"-collector")
	col := &v1beta1.OpenTelemetryCollector{}
	g.Eventually(func(g Gomega) {
		get(g, ns, name, col)
		g.Expect(meta.IsStatusConditionTrue(col.Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
		rec := get(g, ns, name+"-collector-last-ready", &corev1.ConfigMap{})
		g.Expect(rec.Annotations).To(HaveKeyWithValue("otelop.io/last-ready-generation", itoa(col.Generation)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return configMapOf(get(g, ns, name+"-collector", &appsv1.Deployment{}).Spec.Template)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// crashingPod creates a pod of the Deployment's current template whose collector container
// crash-loops, as the kubelet reports it, and writes the Deployment status of a rollout stuck on
// it (one old pod available, one new one not).
func crashingPod(g Gomega, ns, deployment, podName string) {
	ctx := context.Background()
	dep := get(g, ns, deployment, &appsv1.Deployment{})
	crashLoopingPod(g, ns, podName, dep.Spec.Template.Labels, "Error: invalid configuration: processors::batch: bad timeout")
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1}
	g.Expect(k8s.Status().Update(ctx, dep)).To(Succeed())
}

func rolledBack(g Gomega, ns, name string) *v1beta1.OpenTelemetryCollector {
	col := get(g, ns, name, &v1beta1.OpenTelemetryCollector{})
	ready := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal(v1beta1.ReasonRolledBack))
	rb := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionRolledBack)
	g.Expect(rb).NotTo(BeNil())
	g.Expect(rb.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(rb.ObservedGeneration).To(Equal(col.Generation))
	return col
}

func warnings(g Gomega, ns, regarding, reason string) int {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.Type == "Warning" && e.Reason == reason && e.Regarding.Name == regarding {
			n++
		}
	}
	return n
}

// TestRollbackOnCrashLoop: a collector opted in with otelop.io/auto-rollback=true is Ready at
// generation 1 (recorded); generation 2's new pod crash-loops while the old one serves. The
// operator restores generation 1's pod template (its config ConfigMap), reports Ready=False with
// reason RolledBack naming both generations, the pod, the container and the error, sends one
// Warning Event, and holds there through resyncs and an operator restart. A new spec (generation
// 3) rolls out normally and becomes the new last Ready generation.
func TestRollbackOnCrashLoop(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "rb", v1beta1.ModeDeployment, otlpConfig)
	col.Annotations = map[string]string{collectorctrl.AutoRollbackAnnotation: "true"}
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) { get(g, ns, "rb-collector", &appsv1.Deployment{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	good := readyAt(g, ns, "rb")

	changeConfig(g, ns, "rb", "7s")
	var bad string
	g.Eventually(func(g Gomega) {
		bad = configMapOf(get(g, ns, "rb-collector", &appsv1.Deployment{}).Spec.Template)
		g.Expect(bad).NotTo(Equal(good))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	crashingPod(g, ns, "rb-collector", "rb-collector-new-x1")

	g.Eventually(func(g Gomega) {
		col := rolledBack(g, ns, "rb")
		ready := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready.Message).To(ContainSubstring("generation 2 rolled back to generation 1"))
		g.Expect(ready.Message).To(ContainSubstring("pod rb-collector-new-x1: container otc-container is crash-looping, last exit code 1"))
		g.Expect(ready.Message).To(ContainSubstring("bad timeout"))
		g.Expect(configMapOf(get(g, ns, "rb-collector", &appsv1.Deployment{}).Spec.Template)).To(Equal(good))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func() int { return warnings(g, ns, "rb", v1beta1.ReasonRolledBack) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(1))
	// The old config is kept for the rollback; the failing one too (configVersions).
	get(g, ns, good, &corev1.ConfigMap{})

	// Held: resyncs (every 2 s in this suite) and a restarted operator keep generation 1's template.
	held := func() {
		g.Consistently(func(g Gomega) {
			rolledBack(g, ns, "rb")
			g.Expect(configMapOf(get(g, ns, "rb-collector", &appsv1.Deployment{}).Spec.Template)).To(Equal(good))
		}).WithTimeout(5 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	}
	setAvailable(g, ns, "rb-collector") // the restored pods run
	held()
	g.Expect(restartOperator()).To(Succeed())
	held()
	g.Expect(warnings(g, ns, "rb", v1beta1.ReasonRolledBack)).To(Equal(1), "one Warning Event per rollback")

	// A new spec rolls out: generation 3's template, RolledBack gone, then Ready and recorded.
	changeConfig(g, ns, "rb", "3s")
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "rb", &v1beta1.OpenTelemetryCollector{})
		g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionRolledBack)).To(BeNil())
		cm := configMapOf(get(g, ns, "rb-collector", &appsv1.Deployment{}).Spec.Template)
		g.Expect(cm).NotTo(BeElementOf(good, bad))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	readyAt(g, ns, "rb")
}

// TestRollbackDeadline: generation 2's pods never become available and none crashes; after the
// collector's otelop.io/rollback-deadline (3s) it is rolled back, the message saying so.
func TestRollbackDeadline(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "slow", v1beta1.ModeDeployment, otlpConfig)
	col.Annotations = map[string]string{collectorctrl.AutoRollbackAnnotation: "true", collectorctrl.RollbackDeadlineAnnotation: "3s"}
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) { get(g, ns, "slow-collector", &appsv1.Deployment{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	good := readyAt(g, ns, "slow")

	changeConfig(g, ns, "slow", "7s")
	g.Eventually(func(g Gomega) {
		g.Expect(configMapOf(get(g, ns, "slow-collector", &appsv1.Deployment{}).Spec.Template)).NotTo(Equal(good))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		col := rolledBack(g, ns, "slow")
		g.Expect(meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady).Message).To(
			ContainSubstring("generation 2 rolled back to generation 1 (the last Ready one): not Ready within 3s"))
		g.Expect(configMapOf(get(g, ns, "slow-collector", &appsv1.Deployment{}).Spec.Template)).To(Equal(good))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestNoRollbackWithoutOptInOrSpecChange: without the opt-in (the operator's default) a crash
// loop after a config change is only reported (upstream's behaviour) and nothing is recorded;
// opted in, a crash that comes with no spec change (someone else's doing: the generation that
// crashes is the recorded one) is reported and not rolled back; opting out again deletes the
// record.
func TestNoRollbackWithoutOptInOrSpecChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "plain", v1beta1.ModeDeployment, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) { get(g, ns, "plain-collector", &appsv1.Deployment{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, "plain-collector")
	g.Eventually(func(g Gomega) {
		g.Expect(meta.IsStatusConditionTrue(get(g, ns, "plain", &v1beta1.OpenTelemetryCollector{}).Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	changeConfig(g, ns, "plain", "7s")
	g.Eventually(func(g Gomega) {
		dep := get(g, ns, "plain-collector", &appsv1.Deployment{})
		g.Expect(dep.Generation).To(BeNumerically(">", 1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	crashingPod(g, ns, "plain-collector", "plain-collector-new-x1")
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, col).Reason).To(Equal(v1beta1.ReasonCrashLoopBackOff))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain-collector-last-ready"}, &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no record without the opt-in: %v", err)

	// Opted in at the crashing generation: it never was Ready, nothing is recorded or rolled back.
	cur := get(g, ns, "plain", &v1beta1.OpenTelemetryCollector{})
	cur.Annotations = map[string]string{collectorctrl.AutoRollbackAnnotation: "true"}
	g.Expect(k8s.Update(ctx, cur)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(readyCondition(g, col).Reason).To(Equal(v1beta1.ReasonCrashLoopBackOff))
	}).WithTimeout(3 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

	// It recovers and is recorded; then its pods crash with no spec change: reported, not rolled back.
	g.Expect(k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain-collector-new-x1", Namespace: ns}})).To(Succeed())
	readyAt(g, ns, "plain")
	crashingPod(g, ns, "plain-collector", "plain-collector-later-x2")
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, col).Reason).To(Equal(v1beta1.ReasonCrashLoopBackOff))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(readyCondition(g, col).Reason).To(Equal(v1beta1.ReasonCrashLoopBackOff))
	}).WithTimeout(3 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

	// Opted out: the record goes.
	cur = get(g, ns, "plain", &v1beta1.OpenTelemetryCollector{})
	cur.Annotations[collectorctrl.AutoRollbackAnnotation] = "false"
	g.Expect(k8s.Update(ctx, cur)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain-collector-last-ready"}, &corev1.ConfigMap{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue())
}
