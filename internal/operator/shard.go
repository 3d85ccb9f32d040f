package operator

import (
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

// shardCache limits the cached collectors, target allocators, OpAMP bridges and Instrumentations
// to the shard when this instance serves no webhooks. With webhooks it caches them all: sidecar
// and instrumentation injection and validation need every collector and Instrumentation, whatever
// its shard; the controllers still act on their shard only (owned.InShard).
func shardCache(opts cache.Options, shard labels.Selector, webhooks bool) cache.Options {
	if webhooks || shard == nil || shard.Empty() {
		return opts
	}
	for obj, by := range opts.ByObject {
		switch obj.(type) {
		case *v1beta1.OpenTelemetryCollector, *v1alpha1.OpAMPBridge, *v1alpha1.TargetAllocator, *v1alpha1.Instrumentation:
			by.Label = shard
			opts.ByObject[obj] = by
		}
	}
	return opts
}
