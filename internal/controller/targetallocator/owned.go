package targetallocator

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// ownedKinds are the kinds a target allocator's objects are listed (and pruned) from: the mutual
// TLS Secrets first when the operator.targetallocator.mtls gate is on (only then does the operator
// need, and hold, Secret rights), the ServiceMonitor kind only when its API is served.
func ownedKinds(prometheus, mtls bool) []schema.GroupVersionKind {
	kinds := make([]schema.GroupVersionKind, 0, len(mta.Kinds)+1)
	if mtls {
		kinds = append(kinds, mta.SecretGVK)
	}
	for _, gvk := range mta.Kinds {
		if gvk != mta.ServiceMonitorGVK || prometheus {
			kinds = append(kinds, gvk)
		}
	}
	return kinds
}
