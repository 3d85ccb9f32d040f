package collector_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// openCRD is a minimal CRD (any spec accepted) standing in for a third-party API.
func openCRD(group, kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: plural[:len(plural)-1]},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// TestPrometheusOperatorInstalledAfterStart: the Prometheus Operator's CRDs appear while the
// operator runs; collectors that ask for metrics get their ServiceMonitor without a restart.
func TestPrometheusOperatorInstalledAfterStart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "observed", v1beta1.ModeDeployment, otlpConfig)
	col.Spec.Observability.Metrics.EnableMetrics = true
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(readyCondition(g, col)).NotTo(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{
		openCRD("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
		openCRD("monitoring.coreos.com", "PodMonitor", "podmonitors"),
	} {
		g.Expect(k8s.Create(ctx, crd)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		sm := &unstructured.Unstructured{}
		sm.SetAPIVersion("monitoring.coreos.com/v1")
		sm.SetKind("ServiceMonitor")
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "observed-monitoring-collector"}, sm)).To(Succeed())
		g.Expect(sm.GetOwnerReferences()).To(ContainElement(HaveField("Name", "observed")))
	}).WithTimeout(45 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
}
