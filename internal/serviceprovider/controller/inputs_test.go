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

// chartInsecure also makes source-controller accept any certificate over HTTPS: for a registry
// outside the host and the platform cluster it is bad input naming the field, found before
// anything is read or written; a loopback or in-cluster registry is accepted (positive control).
func TestResolveLimitsChartInsecure(t *testing.T) {
	for url, refused := range map[string]string{
		"": "ghcr.io",
		"oci://registry.example.com:443/charts/kube-stack":     "registry.example.com",
		"oci://10.0.0.7:5000/charts/kube-stack":                "10.0.0.7",
		"oci://127.0.0.1:5000/charts/kube-stack":               "",
		"oci://[::1]:5000/charts/kube-stack":                   "",
		"oci://registry.registry.svc:5000/kube-stack":          "",
		"oci://registry.registry.svc.cluster.local/kube-stack": "",
	} {
		t.Run(url, func(t *testing.T) {
			g := NewWithT(t)
			cfg := &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "otel-operator"}, Spec: spv1alpha1.ProviderConfigSpec{
				Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0", ChartURL: url, ChartInsecure: true}}}}
			obj := &spv1alpha1.OtelOperator{Spec: spv1alpha1.OtelOperatorSpec{Version: "1.0.0"}}
			r, err := (&Service{PodNamespace: "openmcp-system"}).resolve(context.Background(), obj, cfg)
			if refused == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(r.version.ChartInsecure).To(BeTrue())
				return
			}
			var ie *inputError
			g.Expect(errors.As(err, &ie)).To(BeTrue(), "%v", err)
			g.Expect(ie.reason).To(Equal(spv1alpha1.ReasonInvalidConfiguration))
			g.Expect(ie.msg).To(And(ContainSubstring(`spec.versions["1.0.0"].chartInsecure: not allowed for registry "`+refused+`"`), ContainSubstring("chartCABundleRef")))
		})
	}
}
