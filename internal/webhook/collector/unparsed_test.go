package collector

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1alpha1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

// unparsedStored is a v1beta1 collector as conversion makes it from a v1alpha1 one whose config
// does not parse (the config text holds a credential).
func unparsedStored(t *testing.T) *v1alpha1.OpenTelemetryCollector {
	t.Helper()
	a := &v1alpha1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "old"}}
	a.Spec.Config = "exporters:\n  otlp: {headers: {api-key: s3cr3t}\nreceivers: ["
	return a
}

// TestUnparsedConfigIsRefusedNotDefaulted: admission of a v1alpha1 request whose config does not
// parse (conversion no longer fails on it, so the v1beta1 webhook sees it): not defaulted (the
// empty config would get telemetry defaults), refused with an error naming spec.config and the
// parse error, without repeating the text. A metadata-only update of such a stored collector is
// allowed, as for every stored collector that today's rules reject.
func TestUnparsedConfigIsRefusedNotDefaulted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := New(Options{Manifests: mcollector.DefaultOptions()})
	c, err := v1alpha1.ToHub(unparsedStored(t))
	g.Expect(err).NotTo(HaveOccurred())

	before := c.DeepCopy()
	g.Expect(w.Default(ctx, c)).To(Succeed())
	g.Expect(c).To(Equal(before), "not defaulted")

	_, err = w.ValidateCreate(ctx, c)
	g.Expect(err).To(MatchError(ContainSubstring("spec.config: Invalid value")))
	g.Expect(err).To(MatchError(ContainSubstring("invalid collector configuration")))
	g.Expect(err).To(MatchError(ContainSubstring(v1alpha1.AnnotationUnparsedConfig)))
	g.Expect(err.Error()).NotTo(ContainSubstring("s3cr3t"))

	changed := c.DeepCopy()
	changed.Spec.Mode = "daemonset"
	_, err = w.ValidateUpdate(ctx, c, changed)
	g.Expect(err).To(MatchError(ContainSubstring("invalid collector configuration")))

	labelled := c.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	_, err = w.ValidateUpdate(ctx, c, labelled)
	g.Expect(err).NotTo(HaveOccurred())
}
