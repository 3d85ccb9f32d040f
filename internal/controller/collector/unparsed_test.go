package collector_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

// TestUnparsedV1alpha1ConfigIsStalled: a collector stored as v1alpha1 whose config does not parse
// reaches the controller as conversion makes it (an empty spec.config, the text in
// v1alpha1.AnnotationUnparsedConfig). It is Stalled (InvalidSpec) with the parse error, and
// nothing is applied. Once a v1beta1 client sets spec.config (the annotation still there), the
// configuration wins: the workload is created and the collector is no longer Stalled.
func TestUnparsedV1alpha1ConfigIsStalled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	stored := &v1alpha1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old"}}
	stored.Spec.Mode = v1alpha1.ModeDeployment
	stored.Spec.UpgradeStrategy = v1alpha1.UpgradeStrategyAutomatic
	stored.Spec.ManagementState = v1alpha1.ManagementStateManaged
	stored.Spec.Config = "receivers:\n  otlp: {protocols: {grpc: {}}\nexporters: [unclosed\n"
	col, err := v1alpha1.ToHub(stored)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(col.Annotations).To(HaveKey(v1alpha1.AnnotationUnparsedConfig))
	g.Expect(k8s.Create(ctx, col)).To(Succeed())

	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "old", &v1beta1.OpenTelemetryCollector{})
		stalled := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil(), "not Stalled yet: %+v", cur.Status.Conditions)
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(Equal(v1beta1.ReasonInvalidSpec))
		g.Expect(stalled.Message).To(ContainSubstring("spec.config: invalid collector configuration"))
		g.Expect(stalled.Message).To(ContainSubstring("yaml"), "the parse error")
		g.Expect(stalled.Message).To(ContainSubstring(v1alpha1.AnnotationUnparsedConfig))
		g.Expect(readyCondition(g, col).Status).To(Equal(metav1.ConditionFalse))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old-collector"}, &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing is applied for a collector without a configuration: %v", err)

	// A v1beta1 client sets a configuration and leaves the annotation: the configuration wins.
	g.Eventually(func() error {
		cur := get(g, ns, "old", &v1beta1.OpenTelemetryCollector{})
		if err := yaml.Unmarshal([]byte(otlpConfig), &cur.Spec.Config); err != nil {
			return err
		}
		return k8s.Update(ctx, cur)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, ns, "old-collector", &appsv1.Deployment{})
		cur := get(g, ns, "old", &v1beta1.OpenTelemetryCollector{})
		g.Expect(cur.Annotations).To(HaveKey(v1alpha1.AnnotationUnparsedConfig))
		g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionStalled)).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
