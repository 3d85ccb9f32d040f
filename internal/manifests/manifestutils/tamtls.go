package manifestutils

import "github.com/otelop/otelop/api/v1beta1"

// TargetAllocatorMTLS reports whether collectors talk to a target allocator over mutual TLS with
// the certificates the operator issues. mtls (spec.mtls of the TargetAllocator, or
// spec.targetAllocator.mtls of the collector: upstream's later per-resource switch) decides when
// set; otherwise gate (operator.targetallocator.mtls) turns it on for every target allocator that
// discovers Prometheus Operator resources, whose Secrets-backed scrape credentials the TLS
// listener protects. The collector and target allocator builders share this rule, so both sides
// agree.
func TargetAllocatorMTLS(mtls *v1beta1.TargetAllocatorMTLS, prometheusCR, gate bool) bool {
	if mtls != nil {
		return mtls.Enabled
	}
	return gate && prometheusCR
}
