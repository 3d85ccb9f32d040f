package collector_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

const scrapeConfig = `
receivers:
  prometheus:
    config:
      scrape_configs:
        - job_name: pods
          kubernetes_sd_configs: [{role: pod}]
exporters:
  debug: {}
service:
  pipelines:
    metrics: {receivers: [prometheus], exporters: [debug]}
`

// collectorConfigs returns the collector.yaml of every ConfigMap of the collector called name.
func collectorConfigs(g Gomega, ns, name string) []string {
	list := &corev1.ConfigMapList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, name+"-collector-") {
			out = append(out, cm.Data["collector.yaml"])
		}
	}
	return out
}

// TestLabelLinkedTargetAllocator: a collector labelled opentelemetry.io/target-allocator=<ta>
// waits (Stalled, TargetAllocatorNotFound, nothing applied) until <ta> exists; then its config
// takes the targets from <ta> (target_allocator block, no scrape_configs) and <ta>'s file selects
// the collector's pods and carries its scrape configs. The unlabelled collector beside it is the
// positive control: same config, static scrape configs kept.
func TestLabelLinkedTargetAllocator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	plain := newCollector(t, ns, "plain", v1beta1.ModeStatefulSet, scrapeConfig)
	g.Expect(k8s.Create(ctx, plain)).To(Succeed())
	col := newCollector(t, ns, "linked", v1beta1.ModeStatefulSet, scrapeConfig)
	col.Labels = map[string]string{"opentelemetry.io/target-allocator": "shared"}
	g.Expect(k8s.Create(ctx, col)).To(Succeed())

	g.Eventually(func(g Gomega) {
		c := readyCondition(g, col)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1beta1.ReasonTargetAllocatorNotFound))
		g.Expect(c.Message).To(ContainSubstring(`"shared"`))
		g.Expect(collectorConfigs(g, ns, "plain")).To(ConsistOf(ContainSubstring("job_name: pods")))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(collectorConfigs(g, ns, "linked")).To(BeEmpty(), "nothing is applied while the target allocator is missing")

	ta := &v1alpha1.TargetAllocator{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns}}
	g.Expect(k8s.Create(ctx, ta)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cfgs := collectorConfigs(g, ns, "linked")
		g.Expect(cfgs).To(HaveLen(1))
		g.Expect(cfgs[0]).NotTo(ContainSubstring("scrape_configs"))
		g.Expect(cfgs[0]).To(ContainSubstring("target_allocator:"))
		g.Expect(cfgs[0]).To(ContainSubstring("endpoint: http://shared-targetallocator:80\n"))
		g.Expect(cfgs[0]).To(ContainSubstring("collector_id: ${POD_NAME}\n"))
		g.Expect(cfgs[0]).To(ContainSubstring("interval: 30s\n"))
		g.Expect(readyCondition(g, col).Reason).NotTo(Equal(v1beta1.ReasonTargetAllocatorNotFound))

		file := get(g, ns, "shared-targetallocator", &corev1.ConfigMap{}).Data["targetallocator.yaml"]
		g.Expect(file).To(ContainSubstring("collector_selector:\n  matchlabels:\n"))
		for _, l := range []string{
			"app.kubernetes.io/component: opentelemetry-collector",
			"app.kubernetes.io/instance: " + ns + ".linked",
			"app.kubernetes.io/managed-by: opentelemetry-operator",
			"app.kubernetes.io/part-of: opentelemetry",
		} {
			g.Expect(file).To(ContainSubstring(l))
		}
		g.Expect(file).To(ContainSubstring("job_name: pods"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	// The control kept its static scrape configs.
	g.Expect(collectorConfigs(g, ns, "plain")).To(ConsistOf(And(ContainSubstring("job_name: pods"), Not(ContainSubstring("target_allocator")))))

	// The target allocator goes: the collector reports it, and keeps what it has.
	g.Expect(k8s.Delete(ctx, ta)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, col).Reason).To(Equal(v1beta1.ReasonTargetAllocatorNotFound))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(collectorConfigs(g, ns, "linked")).To(HaveLen(1))
}
