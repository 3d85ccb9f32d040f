package apply

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ownership of objects that cannot carry an owner reference (cluster-scoped objects generated for
// a namespaced resource) is recorded in two annotations: OwnerAnnotation holds
// "<Kind>/<namespace>/<name>" of the owner, OwnerUIDAnnotation its UID (informational: a resource
// deleted and recreated under the same name is the same tenant's and takes its objects over).
const (
	OwnerAnnotation    = "operator.opentelemetry.io/owner"
	OwnerUIDAnnotation = "operator.opentelemetry.io/owner-uid"
)

// SameOwner reports whether live belongs to the owner that desired declares: the same controller
// owner reference (by UID) when desired has one, otherwise the same non-empty OwnerAnnotation.
// The applier deletes and recreates an object only when this holds.
func SameOwner(desired, live client.Object) bool {
	if ref := controllerRef(desired); ref != "" {
		return controllerRef(live) == ref
	}
	want := desired.GetAnnotations()[OwnerAnnotation]
	return want != "" && live.GetAnnotations()[OwnerAnnotation] == want
}

func controllerRef(o client.Object) string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return string(ref.UID)
		}
	}
	return ""
}
