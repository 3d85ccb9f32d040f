package collector_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// TestCrashLoopingPodIsReportedInStatus: envtest has no kubelet, so the test writes the pod status
// a kubelet would (the collector container in CrashLoopBackOff after exiting 1 with a termination
// message). The collector's status names the pod, the container, the exit code and the message,
// with reason CrashLoopBackOff, Stalled=True and a Warning Event; once the pods are available
// both clear. test/realnode proves it with a real crash.
func TestCrashLoopingPodIsReportedInStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "crashy", v1beta1.ModeDeployment, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) { get(g, ns, "crashy-collector", dep) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The pod the ReplicaSet would create, with the Deployment's pod labels, and a pod of someone
	// else in the namespace that crashes too (it must not be reported).
	mkPod := func(name string, labels map[string]string) *corev1.Pod {
		return crashLoopingPod(g, ns, name, labels, "Error: invalid configuration: "+name)
	}
	mkPod("aaa-other", map[string]string{"app": "other"})
	pod := mkPod("crashy-collector-5d8f-x2x", dep.Spec.Template.Labels)

	// What the Deployment controller would write while its pod crash-loops.
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1}
	g.Expect(k8s.Status().Update(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "crashy", &v1beta1.OpenTelemetryCollector{})
		ready := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(v1beta1.ReasonCrashLoopBackOff))
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Message).To(Equal("Deployment crashy-collector: 0/1 pods available; pod crashy-collector-5d8f-x2x: " +
			"container otc-container is crash-looping, last exit code 1 (Error): " +
			"Error: invalid configuration: crashy-collector-5d8f-x2x"))
		g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1beta1.ConditionStalled)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	expectWarning(g, ns, "crashy", v1beta1.ReasonCrashLoopBackOff, "exit code 1")

	// The collector recovers: the pod is ready and the Deployment available.
	podRecovers(g, pod, "crashy")
}

// expectWarning waits for a Warning Event with reason about the collector named regarding whose
// note contains note.
func expectWarning(g Gomega, ns, regarding, reason, note string) {
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(ContainElement(And(
			HaveField("Reason", reason), HaveField("Type", "Warning"),
			HaveField("Regarding.Name", regarding), HaveField("Note", ContainSubstring(note)))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// podRecovers writes what the kubelet and the Deployment controller would once the collector's
// pod runs (its first container ready and running, the Deployment <collector>-collector
// available) and waits for the collector to be Ready and no longer Stalled.
func podRecovers(g Gomega, pod *corev1.Pod, collector string) {
	pod.Status.ContainerStatuses[0].Ready = true
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	g.Expect(k8s.Status().Update(context.Background(), pod)).To(Succeed())
	setAvailable(g, pod.Namespace, collector+"-collector")
	g.Eventually(func(g Gomega) {
		cur := get(g, pod.Namespace, collector, &v1beta1.OpenTelemetryCollector{})
		g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
		g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// crashLoopingPod creates a pod with labels whose otc-container crash-loops as the kubelet reports
// it (restarted 4 times, last exit code 1 with message as its termination message).
func crashLoopingPod(g Gomega, ns, name string, labels map[string]string, message string) *corev1.Pod {
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "otc-container", Image: "otelcol"}}}}
	g.Expect(k8s.Create(ctx, p)).To(Succeed())
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "otc-container", Image: "otelcol", RestartCount: 4,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: message}},
	}}
	g.Expect(k8s.Status().Update(ctx, p)).To(Succeed())
	return p
}
