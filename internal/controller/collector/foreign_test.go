package collector_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// A user's StatefulSet that happens to have the generated name is neither taken over by forced
// apply nor deleted to change its immutable fields (before, the recreate path deleted whatever had
// the name): the collector is Stalled with reason OwnershipConflict.
func TestUserWorkloadWithTheGeneratedNameIsNotReplaced(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	labels := map[string]string{"app": "mine"}
	theirs := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "u-collector", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c:1"}}},
			},
		},
	}
	g.Expect(k8s.Create(ctx, theirs)).To(Succeed())

	col := newCollector(t, ns, "u", v1beta1.ModeStatefulSet, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := readyCondition(g, col)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonOwnershipConflict))
		g.Expect(c.Message).To(ContainSubstring(ns + "/u-collector"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	cur := get(g, ns, "u-collector", &appsv1.StatefulSet{})
	g.Expect(cur.UID).To(Equal(theirs.UID))
	g.Expect(cur.DeletionTimestamp).To(BeNil())
	g.Expect(cur.Spec.Selector.MatchLabels).To(Equal(labels))
	g.Expect(cur.OwnerReferences).To(BeEmpty(), "not adopted")
	g.Expect(cur.ManagedFields).NotTo(ContainElement(HaveField("Manager", HavePrefix("opentelemetry-operator"))), "no field of it was applied")

	// Deleting the stalled collector leaves the user's StatefulSet alone.
	g.Expect(k8s.Delete(ctx, col)).To(Succeed())
	goneEventually(g, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: col.Name}}, "stalled collector gone")
	cur = get(g, ns, "u-collector", &appsv1.StatefulSet{})
	g.Expect(cur.UID).To(Equal(theirs.UID))
	g.Expect(cur.DeletionTimestamp).To(BeNil())
}
