package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

const statefulSetCollector = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: stateful
spec:
  mode: statefulset
  replicas: 2
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
`

// TestVolumeClaimTemplatesChangeKeepsThePodsRunning: volumeClaimTemplates cannot change in place,
// so the operator recreates the StatefulSet. With the real garbage collector and StatefulSet
// controller, the pods are orphaned and adopted by the new StatefulSet instead of all being
// deleted at once: the same pods (UIDs) keep running, now owned by the new StatefulSet.
func TestVolumeClaimTemplatesChangeKeepsThePodsRunning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	create(g, ns, statefulSetCollector)

	podUIDs := func(g Gomega) map[string]types.UID {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		out := map[string]types.UID{}
		for _, p := range pods.Items {
			out[p.Name] = p.UID
		}
		return out
	}
	var before map[string]types.UID
	sts := &appsv1.StatefulSet{}
	g.Eventually(func(g Gomega) {
		c := ready(g, ns, "stateful")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		before = podUIDs(g)
		g.Expect(before).To(HaveLen(2))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stateful-collector"}, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	oldUID := sts.UID

	col := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stateful"}, col)).To(Succeed())
	col.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}}
	g.Expect(k8s.Update(ctx, col)).To(Succeed())

	g.Eventually(func(g Gomega) {
		cur := &appsv1.StatefulSet{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stateful-collector"}, cur)).To(Succeed())
		g.Expect(cur.UID).NotTo(Equal(oldUID), "recreated")
		g.Expect(cur.Spec.VolumeClaimTemplates).To(HaveLen(1))
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			g.Expect(p.UID).To(Equal(before[p.Name]), "pod %s was not replaced", p.Name)
			g.Expect(p.DeletionTimestamp).To(BeNil())
			ref := metav1.GetControllerOf(&p)
			g.Expect(ref).NotTo(BeNil(), "pod %s adopted", p.Name)
			g.Expect(ref.UID).To(Equal(cur.UID))
		}
		g.Expect(ready(g, ns, "stateful").Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
}
