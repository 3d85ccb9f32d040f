package collector

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// collectorYAMLOf builds col and returns its collector.yaml.
func collectorYAMLOf(t *testing.T, g *WithT, file string, label *string, embedded bool) (string, error) {
	t.Helper()
	opts := DefaultOptions()
	col := loadCR(t, file, opts)
	delete(col.Labels, manifestutils.LabelTargetAllocator)
	if label != nil {
		if col.Labels == nil {
			col.Labels = map[string]string{}
		}
		col.Labels[manifestutils.LabelTargetAllocator] = *label
	}
	col.Spec.TargetAllocator.Enabled = embedded
	objs, err := Build(col, opts)
	if err != nil {
		return "", err
	}
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			return cm.Data["collector.yaml"], nil
		}
	}
	g.Expect(objs).To(ContainElement(BeAssignableToTypeOf(&corev1.ConfigMap{})))
	return "", nil
}

func TestLinkedTargetAllocatorRewrite(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		name       string
		label      *string
		embedded   bool
		endpoint   string // "" means no rewrite
		shouldFail bool
	}{
		// The positive control: without a link the static scrape configs stay.
		{name: "no label", label: nil},
		{name: "empty label is no link", label: str("")},
		{name: "label", label: str("shared"), endpoint: "http://shared-targetallocator:80"},
		{name: "embedded", embedded: true, endpoint: "http://scraper-targetallocator:80"},
		{name: "label wins over embedded", label: str("shared"), embedded: true, endpoint: "http://shared-targetallocator:80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := collectorYAMLOf(t, g, "linkedtargetallocator.yaml", tc.label, tc.embedded)
			g.Expect(err).NotTo(HaveOccurred())
			if tc.endpoint == "" {
				g.Expect(got).To(ContainSubstring("scrape_configs:"))
				g.Expect(got).NotTo(ContainSubstring("target_allocator:"))
				return
			}
			g.Expect(got).NotTo(ContainSubstring("scrape_configs"))
			g.Expect(got).To(ContainSubstring("target_allocator:\n"))
			g.Expect(got).To(ContainSubstring("endpoint: " + tc.endpoint + "\n"))
			g.Expect(got).To(ContainSubstring("collector_id: ${POD_NAME}\n"))
			g.Expect(got).To(ContainSubstring("interval: 30s\n"))
		})
	}
}

func TestLinkedTargetAllocatorNeedsPrometheusReceiver(t *testing.T) {
	g := NewWithT(t)
	// deployment.yaml has no prometheus receiver: unlinked it builds (positive control), linked
	// the error names the missing receiver.
	_, err := collectorYAMLOf(t, g, "deployment.yaml", nil, false)
	g.Expect(err).NotTo(HaveOccurred())
	label := "shared"
	_, err = collectorYAMLOf(t, g, "deployment.yaml", &label, false)
	g.Expect(err).To(MatchError(ContainSubstring("spec.config.receivers.prometheus")))
}
