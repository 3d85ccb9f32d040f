package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/webhook/instrumentation"
)

// TestInstrumentationIsDefaultedAndValidated goes through the operator's Instrumentation webhooks
// as installed from config/webhook: a minimal Instrumentation comes back with upstream's default
// images and their annotations; one with a bad sampler and TLS files without their Secret is
// refused with every field named, and nothing is stored.
func TestInstrumentationIsDefaultedAndValidated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	create(g, ns, `
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: my-instrumentation
spec:
  exporter:
    endpoint: http://otel-collector:4318
  propagators: [tracecontext, baggage]
  sampler:
    type: parentbased_traceidratio
    argument: "0.25"
`)
	got := &v1alpha1.Instrumentation{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "my-instrumentation"}, got)).To(Succeed())
	d := instrumentation.DefaultImages()
	g.Expect(got.Spec.Java.Image).To(Equal(d.Java))
	g.Expect(got.Spec.Go.Image).To(Equal(d.Go))
	g.Expect(got.Spec.Java.Resources.Limits.Memory().String()).To(Equal("256Mi"))
	g.Expect(got.Annotations).To(HaveKeyWithValue("instrumentation.opentelemetry.io/default-auto-instrumentation-python-image", d.Python))

	bad := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(`
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: bad
spec:
  exporter:
    endpoint: https://otel-collector:4318
    tls: {cert_file: tls.crt, key_file: tls.key}
  sampler: {type: traceidratio, argument: "25%"}
`), &bad.Object)).To(Succeed())
	bad.SetNamespace(ns)
	var err error
	g.Eventually(func() bool {
		err = k8s.Create(ctx, bad.DeepCopy())
		return err != nil && !isWebhookUnavailable(err)
	}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(BeTrue())
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	for _, f := range []string{"spec.sampler.argument", "spec.exporter.tls.cert_file", "spec.exporter.tls.key_file"} {
		g.Expect(err.Error()).To(ContainSubstring(f))
	}
	g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bad"}, &v1alpha1.Instrumentation{}))).To(BeTrue())
	g.Expect(k8s.Delete(ctx, got)).To(Succeed())
}
