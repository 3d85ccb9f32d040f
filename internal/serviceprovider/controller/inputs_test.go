package controller

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
)

// A ProviderConfig stored before the CRD's rule against chartInsecure with chartCABundleRef (or
// written past it) is bad input naming the field, found before anything is read or written: the
// Service has no client here.
func TestResolveRejectsInsecureWithACA(t *testing.T) {
	g := NewWithT(t)
	cfg := &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "otel-operator"}, Spec: spv1alpha1.ProviderConfigSpec{
		Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0", ChartInsecure: true, ChartCABundleRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "registry-ca"}, Key: "ca.crt"}}}}}
	obj := &spv1alpha1.OtelOperator{Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}}
	_, err := (&Service{PodNamespace: "openmcp-system"}).resolve(context.Background(), obj, cfg)
	var ie *inputError
	g.Expect(errors.As(err, &ie)).To(BeTrue(), "%v", err)
	g.Expect(ie.reason).To(Equal(spv1alpha1.ReasonInvalidConfiguration))
	g.Expect(ie.msg).To(ContainSubstring(`spec.versions["1.0.0"].chartInsecure: must not be true together with chartCABundleRef`))
}

// A user's fullnameOverride would give every instance the same names in the shared workload
// cluster: bad input naming the field, found before anything is read or written.
func TestResolveRefusesFullnameOverride(t *testing.T) {
	g := NewWithT(t)
	cfg := &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "otel-operator"}, Spec: spv1alpha1.ProviderConfigSpec{
		Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0", HelmValues: &apiextensionsv1.JSON{Raw: []byte(`{"opentelemetry-operator":{"fullnameOverride":"otel"}}`)}}}}}
	obj := &spv1alpha1.OtelOperator{Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}}
	_, err := (&Service{PodNamespace: "openmcp-system"}).resolve(context.Background(), obj, cfg)
	var ie *inputError
	g.Expect(errors.As(err, &ie)).To(BeTrue(), "%v", err)
	g.Expect(ie.reason).To(Equal(spv1alpha1.ReasonInvalidConfiguration))
	g.Expect(ie.msg).To(ContainSubstring(`spec.versions["1.0.0"].helmValues.opentelemetry-operator.fullnameOverride: must not be set`))
}
