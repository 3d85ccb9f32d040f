package autodetect

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Detect reads the capabilities once, from the CustomResourceDefinitions' names (metadata only),
// by the rules the Detector follows: for a command that runs once (render --diff), not the
// operator.
func Detect(ctx context.Context, c client.Reader) (Capabilities, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
	if err := c.List(ctx, list); err != nil {
		return Capabilities{}, err
	}
	names := map[string]bool{}
	for _, item := range list.Items {
		names[item.Name] = true
	}
	return fromNames(names), nil
}
