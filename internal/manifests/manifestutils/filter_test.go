package manifestutils

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestFilter(t *testing.T) {
	cases := []struct {
		patterns []string
		key      string
		drops    bool
	}{
		{nil, "anything", false},
		{[]string{LastAppliedAnnotation}, LastAppliedAnnotation, true},
		{[]string{".*filter.out"}, "label.filter.out", true},
		{[]string{".*filter.out"}, "label.keep", false},
		{[]string{"*.filter.out"}, "label.filter.out", true},
		{[]string{"*.filter.out"}, "label.filterXout", false},
		{[]string{"("}, "(", true},
	}
	for _, tc := range cases {
		g := NewWithT(t)
		f, err := NewFilter(tc.patterns)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(f.Drops(tc.key)).To(Equal(tc.drops), "%v on %q", tc.patterns, tc.key)
	}
}

func TestVersionLabel(t *testing.T) {
	cases := map[string]string{
		"":                      "latest",
		"otel/collector":        "latest",
		"otel/collector:0.1.0":  "0.1.0",
		"reg:5000/otel:1.2":     "",
		"otel/c:0.2@sha256:abc": "0.2",
	}
	for image, want := range cases {
		NewWithT(t).Expect(VersionLabel(image)).To(Equal(want), image)
	}
}

func TestNewFilters(t *testing.T) {
	g := NewWithT(t)
	lf, af, err := NewFilters([]string{"*.label"}, []string{"*.annotation"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lf.Drops("a.label")).To(BeTrue())
	g.Expect(lf.Drops("a.annotation")).To(BeFalse())
	g.Expect(af.Drops("a.annotation")).To(BeTrue())
	g.Expect(af.Drops("a.label")).To(BeFalse())
}
