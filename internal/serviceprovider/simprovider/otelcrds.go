package simprovider

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// OTelCRDs are minimal opentelemetry.io CRDs (open schemas) for the kinds users create in a
// control plane: what the CRDs release would install. Collectors are served at v1alpha1 and
// v1beta1 without conversion, so objects of both versions can be created.
func OTelCRDs() []*apiextensionsv1.CustomResourceDefinition {
	open := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
	}}
	crd := func(kind, plural string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".opentelemetry.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "opentelemetry.io", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: lower(kind)},
			},
		}
		for i, v := range versions {
			c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
				Name: v, Served: true, Storage: i == 0, Schema: open,
			})
		}
		return c
	}
	return []*apiextensionsv1.CustomResourceDefinition{
		crd("OpenTelemetryCollector", "opentelemetrycollectors", "v1beta1", "v1alpha1"),
		crd("Instrumentation", "instrumentations", "v1alpha1"),
		crd("OpAMPBridge", "opampbridges", "v1alpha1"),
		crd("TargetAllocator", "targetallocators", "v1alpha1"),
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
