package podmutation_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// admissionCounts reads, as a scrape of the manager's /metrics would, every
// otelop_webhook_admissions_total series ("webhook/outcome/reason") and the sample count of the
// pod webhook's duration histogram.
func admissionCounts(g Gomega) (map[string]float64, uint64) {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	counts := map[string]float64{}
	var observed uint64
	for _, f := range families {
		switch f.GetName() {
		case admissionmetrics.AdmissionsName:
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				counts[l["webhook"]+"/"+l["outcome"]+"/"+l["reason"]] = m.GetCounter().GetValue()
			}
		case admissionmetrics.DurationName:
			for _, m := range f.GetMetric() {
				for _, p := range m.GetLabel() {
					if p.GetName() == "webhook" && p.GetValue() == "pod" {
						observed = m.GetHistogram().GetSampleCount()
					}
				}
			}
		}
	}
	return counts, observed
}

// delta returns the series whose value changed between before and after, with the change.
func delta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// TestAdmissionMetrics: each pod created through the API server moves exactly the counter of
// what the webhook decided for it (and the pod webhook's latency histogram by one), and nothing
// else: a plain pod is skipped (not_requested), an instrumented one injected, a reference to
// another namespace's Instrumentation without consent and a Go agent in a namespace that did not
// opt in are refused, a missing Instrumentation is skipped (unresolved). The Instrumentation
// webhooks count an accepted object as allowed and an invalid one as refused.
func TestAdmissionMetrics(t *testing.T) {
	ns := newNamespace(t, "metrics", nil)
	other := newNamespace(t, "metrics-other", nil)
	newInstrumentation(t, ns, "otel")
	newInstrumentation(t, other, "otel")
	java := instrumentation.InjectAnnotation(instrumentation.Java)
	for _, tc := range []struct {
		name string
		ann  map[string]string
		want string
	}{
		{"plain", nil, "pod/skipped/not_requested"},
		{"java", map[string]string{java: "true"}, "pod/injected/instrumentation"},
		{"foreign", map[string]string{java: other + "/otel"}, "pod/refused/no_consent"},
		{"go", map[string]string{instrumentation.InjectAnnotation(instrumentation.Go): "true", instrumentation.GoTargetExeAnnotation: "/app"},
			"pod/refused/go_namespace_not_allowed"},
		{"missing", map[string]string{java: "nope"}, "pod/skipped/unresolved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before, seen := admissionCounts(g)
			create(t, newPod(ns, "m-"+tc.name, tc.ann))
			after, seenAfter := admissionCounts(g)
			g.Expect(delta(before, after)).To(Equal(map[string]float64{tc.want: 1}))
			g.Expect(seenAfter - seen).To(Equal(uint64(1)))
		})
	}

	t.Run("instrumentation webhooks", func(t *testing.T) {
		g := NewWithT(t)
		before, _ := admissionCounts(g)
		newInstrumentation(t, ns, "valid")
		after, _ := admissionCounts(g)
		g.Expect(delta(before, after)).To(Equal(map[string]float64{
			"instrumentation-defaulting/allowed/": 1, "instrumentation-validation/allowed/": 1}))

		before = after
		bad := &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "invalid"},
			Spec: v1alpha1.InstrumentationSpec{Sampler: v1alpha1.Sampler{Type: v1alpha1.TraceIDRatio, Argument: "two"}}}
		g.Expect(env.Client.Create(context.Background(), bad)).NotTo(Succeed())
		after, _ = admissionCounts(g)
		g.Expect(delta(before, after)).To(Equal(map[string]float64{
			"instrumentation-defaulting/allowed/": 1, "instrumentation-validation/refused/invalid": 1}))
	})
}
