package manifestutils

// The target allocator image the operator deploys when a TargetAllocator's spec.image is empty
// (the --target-allocator-image default): upstream's, until this project's own allocator also
// serves prometheus_cr. Both the collector builder (embedded target allocators) and the target
// allocator builder read it from here, the one place it lives.
const (
	// TargetAllocatorVersion is the default image's tag.
	TargetAllocatorVersion = "0.140.0"
	// TargetAllocatorImageRepository is upstream's target allocator repository.
	TargetAllocatorImageRepository = "ghcr.io/open-telemetry/opentelemetry-operator/target-allocator"
	// TargetAllocatorImage is the default image.
	TargetAllocatorImage = TargetAllocatorImageRepository + ":" + TargetAllocatorVersion
)
