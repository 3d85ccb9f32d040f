package chart

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// certManagerCRDs are cert-manager's Certificate, Issuer and ClusterIssuer kinds (cert-manager.io/v1)
// with a structural schema of the fields the chart sets, written for this test from cert-manager's
// API reference (cert-manager itself is not a dependency). Unknown fields are rejected, so a
// misspelt field in the chart fails the dry run.
func certManagerCRDs() []*apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	strs := apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}}
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	issuerRef := obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str, "kind": str, "group": str})
	certSpec := obj(map[string]apiextensionsv1.JSONSchemaProps{
		"dnsNames":    strs,
		"issuerRef":   issuerRef,
		"secretName":  str,
		"duration":    str,
		"renewBefore": str,
		"subject":     obj(map[string]apiextensionsv1.JSONSchemaProps{"organizationalUnits": strs, "organizations": strs}),
	})
	certSpec.Required = []string{"issuerRef", "secretName"}
	issuerSpec := obj(map[string]apiextensionsv1.JSONSchemaProps{
		"selfSigned": obj(map[string]apiextensionsv1.JSONSchemaProps{"crlDistributionPoints": strs}),
		"ca":         obj(map[string]apiextensionsv1.JSONSchemaProps{"secretName": str}),
	})
	crd := func(kind string, scope apiextensionsv1.ResourceScope, spec apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
		plural := strings.ToLower(kind) + "s"
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".cert-manager.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "cert-manager.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
				Scope: scope,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type:       "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec, "apiVersion": str, "kind": str, "metadata": {Type: "object"}},
					}},
				}},
			},
		}
	}
	return []*apiextensionsv1.CustomResourceDefinition{
		crd("Certificate", apiextensionsv1.NamespaceScoped, certSpec),
		crd("Issuer", apiextensionsv1.NamespaceScoped, issuerSpec),
		crd("ClusterIssuer", apiextensionsv1.ClusterScoped, issuerSpec),
	}
}
