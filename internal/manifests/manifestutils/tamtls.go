package manifestutils

import "github.com/otelop/otelop/api/v1beta1"

// TargetAllocatorMTLS reports whether collectors talk to a target allocator over mutual TLS with
// the certificates the operator issues. gate (operator.targetallocator.mtls) is the master switch:
// the operator holds Secret rights in the allocators' namespaces only when it is on. With it, mtls
// (spec.mtls of the TargetAllocator, or spec.targetAllocator.mtls of the collector: upstream's
// later per-resource switch) decides when set, and otherwise every target allocator that discovers
// Prometheus Operator resources, whose Secrets-backed scrape credentials the TLS listener
// protects, uses it. The collector and target allocator builders share this rule, so both sides
// agree.
func TargetAllocatorMTLS(mtls *v1beta1.TargetAllocatorMTLS, prometheusCR, gate bool) bool {
	if !gate {
		return false
	}
	if mtls != nil {
		return mtls.Enabled
	}
	return prometheusCR
}
