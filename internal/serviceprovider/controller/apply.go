// Package controller is the OtelOperator service logic plugged into the generic apireconciler:
// it resolves and validates the ProviderConfig for the requested version, gives the workload
// operator access to the control plane, copies pull secrets and the CA bundle, applies the Flux
// objects, reports every managed resource, and on deletion waits for the users' opentelemetry.io
// objects to go before it removes what it made.
package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is the server-side apply field manager of everything the provider writes.
const FieldOwner = "service-provider-otel-operator"

// apply server-side applies a typed object (its TypeMeta must be set). Status and server-set
// metadata are left out, so only what the provider means is owned.
func apply(ctx context.Context, c client.Client, obj client.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("converting %T: %w", obj, err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
		delete(md, "resourceVersion")
		delete(md, "uid")
		delete(md, "managedFields")
	}
	u := &unstructured.Unstructured{Object: m}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %s: %w", u.GetKind(), key(obj), err)
	}
	return nil
}

func key(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
