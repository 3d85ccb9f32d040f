package collector_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// imagePullPod creates the pod the ReplicaSet would create from dep's template and writes the
// status the kubelet writes after a failed pull of image.
func imagePullPod(g Gomega, dep *appsv1.Deployment, name, image string) *corev1.Pod {
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dep.Namespace, Labels: dep.Spec.Template.Labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "otc-container", Image: image}}}}
	g.Expect(k8s.Create(ctx, p)).To(Succeed())
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "otc-container", Image: image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull",
			Message: `failed to pull and unpack image "` + image + `": not found`}},
	}}
	g.Expect(k8s.Status().Update(ctx, p)).To(Succeed())
	return p
}

// TestImagePullFailureIsReportedInStatus: envtest has no kubelet, so the test writes the pod
// status a kubelet would after a pull of a mistyped image (ErrImagePull, then ImagePullBackOff
// with the failed pull in its message). The collector is Stalled with reason ImagePullBackOff and
// a message naming the pod, the container, the image and the kubelet's message, with a Warning
// Event; the kubelet's back-off does not change the status; once the pods are available both
// conditions clear. test/realnode proves it with a real failed pull.
func TestImagePullFailureIsReportedInStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const image = "ghcr.io/example/otelcol-typo:0.1"
	col := newCollector(t, ns, "typo", v1beta1.ModeDeployment, otlpConfig)
	col.Spec.Image = image
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) { get(g, ns, "typo-collector", dep) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	pod := imagePullPod(g, dep, "typo-collector-6b7c-q9z", image)

	// What the Deployment controller would write while its pod cannot start.
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1}
	g.Expect(k8s.Status().Update(ctx, dep)).To(Succeed())
	want := `Deployment typo-collector: 0/1 pods available; pod typo-collector-6b7c-q9z: container otc-container ` +
		`(image "` + image + `") cannot start: ErrImagePull: failed to pull and unpack image "` + image + `": not found`
	var stalledSince metav1.Time
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "typo", &v1beta1.OpenTelemetryCollector{})
		ready := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(v1beta1.ReasonImagePullBackOff))
		g.Expect(ready.Message).To(Equal(want))
		stalled := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(Equal(v1beta1.ReasonImagePullBackOff))
		stalledSince = stalled.LastTransitionTime
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	expectWarning(g, ns, "typo", v1beta1.ReasonImagePullBackOff, image)

	// The kubelet backs off: the waiting reason changes, the cause stays in its message, and the
	// collector's status does not change (the suite resyncs every 2 s).
	pod.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
		Message: `Back-off pulling image "` + image + `": ErrImagePull: failed to pull and unpack image "` + image + `": not found`}
	g.Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
	g.Consistently(func(g Gomega) {
		cur := get(g, ns, "typo", &v1beta1.OpenTelemetryCollector{})
		ready := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready.Reason).To(Equal(v1beta1.ReasonImagePullBackOff))
		g.Expect(ready.Message).To(Equal(want))
		g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled).LastTransitionTime).To(Equal(stalledSince))
	}).WithTimeout(5 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())

	// The image is fixed: the pod runs and the Deployment is available.
	podRecovers(g, pod, "typo")
}

// TestImagePullFailureDuringARolloutIsReported: a new spec.image with a typo on a running
// collector. The Deployment keeps the old pod (available) and waits for the new one, which cannot
// pull its image: without a look at the pods the collector would say "rolling out" forever.
func TestImagePullFailureDuringARolloutIsReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "upgrade", v1beta1.ModeDeployment, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) { get(g, ns, "upgrade-collector", dep) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, dep.Name)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, col).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	const image = "ghcr.io/example/otelcol:0.l"
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "upgrade", &v1beta1.OpenTelemetryCollector{})
		cur.Spec.Image = image
		g.Expect(k8s.Update(ctx, cur)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, ns, "upgrade-collector", dep)
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	imagePullPod(g, dep, "upgrade-collector-7f9d-k2m", image)
	// The old pod is available, the new one is not: 2 pods, 1 updated.
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 2, UpdatedReplicas: 1,
		ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1}
	g.Expect(k8s.Status().Update(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := readyCondition(g, col)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonImagePullBackOff))
		g.Expect(c.Message).To(HavePrefix(`Deployment upgrade-collector: 1/1 pods available; pod upgrade-collector-7f9d-k2m: ` +
			`container otc-container (image "` + image + `") cannot start: ErrImagePull: `))
		cur := get(g, ns, "upgrade", &v1beta1.OpenTelemetryCollector{})
		g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1beta1.ConditionStalled)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
