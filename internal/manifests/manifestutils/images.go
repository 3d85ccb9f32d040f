package manifestutils

import "github.com/otelop/otelop/internal/version"

// The target allocator image the operator deploys when a TargetAllocator's spec.image is empty
// (the --target-allocator-image default): this project's own allocator (cmd/target-allocator),
// published by `make images` as <version.ImageRegistry>/target-allocator:<version.Version>, the
// operator's own version. Both the collector builder (embedded target allocators) and the target
// allocator builder read it from here, the one place it lives.

// TargetAllocatorImageName is the name of the target allocator's image (and binary).
const TargetAllocatorImageName = "target-allocator"

var (
	// TargetAllocatorVersion is the default image's tag: the operator's version.
	TargetAllocatorVersion = version.Version
	// TargetAllocatorImage is the default image (version.Image, so that the registry a build
	// stamps is the one the operator deploys from).
	TargetAllocatorImage = version.Image(TargetAllocatorImageName)
)
