package collector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// TestUpgradeMigratesWithoutRewritingTheSpec: a collector last managed at 0.100.0 whose config
// relies on the old localhost-free defaults gets a migrated config in its ConfigMap; the stored
// spec stays as the user wrote it and status.version keeps saying 0.100.0 while the spec still
// needs the migration.
func TestUpgradeMigratesWithoutRewritingTheSpec(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cfg := `
receivers:
  otlp:
    protocols: {grpc: {}}
exporters:
  debug: {}
service:
  pipelines:
    traces: {receivers: [otlp], exporters: [debug]}
`
	col := newCollector(t, ns, "old", v1beta1.ModeDeployment, cfg)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, ns, "old", &v1beta1.OpenTelemetryCollector{}).Status.Version).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Wait until the controller is done with the new collector (its resourceVersion holds still),
	// so that no reconcile that read it before the edit below writes status.version after it.
	g.Eventually(func(g Gomega) {
		rv := get(g, ns, "old", &v1beta1.OpenTelemetryCollector{}).ResourceVersion
		g.Consistently(func(g Gomega) {
			g.Expect(get(g, ns, "old", &v1beta1.OpenTelemetryCollector{}).ResourceVersion).To(Equal(rv))
		}).WithTimeout(1500 * time.Millisecond).WithPolling(250 * time.Millisecond).Should(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// As if an upstream operator at 0.100.0 had managed it last.
	get(g, ns, "old", col)
	col.Status.Version = "0.100.0"
	g.Expect(k8s.Status().Update(ctx, col)).To(Succeed())
	// Our operator then reconciles it (on start, or on its next change): a status write alone is
	// not watched, so touch an annotation.
	patch := []byte(`{"metadata":{"annotations":{"test.otelop.io/poke":"1"}}}`)
	g.Expect(k8s.Patch(ctx, col, client.RawPatch(types.MergePatchType, patch))).To(Succeed())

	g.Eventually(func(g Gomega) {
		cms := &corev1.ConfigMapList{}
		g.Expect(k8s.List(ctx, cms, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": ns + ".old"})).To(Succeed())
		found := false
		for _, cm := range cms.Items {
			if strings.Contains(cm.Data["collector.yaml"], "0.0.0.0:4317") {
				found = true
			}
		}
		g.Expect(found).To(BeTrue(), "the generated config carries the migrated endpoint")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	cur := get(g, ns, "old", &v1beta1.OpenTelemetryCollector{})
	grpc := cur.Spec.Config.Receivers.Object["otlp"].(map[string]any)["protocols"].(map[string]any)["grpc"]
	g.Expect(grpc).To(BeEmpty(), "the stored spec is not rewritten")
	g.Expect(cur.Status.Version).To(Equal("0.100.0"), "status.version moves once the spec no longer needs the migration")
}
