package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/controller/owned"
)

// Without webhooks an instance caches only its shard's resources; with webhooks it caches them
// all (injection and validation need every collector); other kinds keep their own selectors.
func TestShardCache(t *testing.T) {
	shard, err := owned.ParseShard("team-a")
	if err != nil {
		t.Fatal(err)
	}
	in := labels.Set{owned.ShardLabel: "team-a"}
	out := labels.Set{owned.ShardLabel: "team-b"}

	opts := shardCache(CacheOptions(nil), shard, false)
	for obj, by := range opts.ByObject {
		switch obj.(type) {
		case *v1beta1.OpenTelemetryCollector, *v1alpha1.OpAMPBridge, *v1alpha1.TargetAllocator, *v1alpha1.Instrumentation:
			if by.Label == nil || !by.Label.Matches(in) || by.Label.Matches(out) {
				t.Errorf("%T: cache selector %v does not select the shard only", obj, by.Label)
			}
		default:
			if by.Label != nil && by.Label.String() == shard.String() {
				t.Errorf("%T is not a sharded kind but got the shard selector", obj)
			}
		}
	}
	if opts.DefaultLabelSelector.Matches(labels.Set{}) {
		t.Error("the default selector (managed-by) was lost")
	}

	for obj, by := range shardCache(CacheOptions(nil), shard, true).ByObject {
		if by.Label != nil && !by.Label.Empty() {
			if _, ok := obj.(*corev1.Namespace); !ok && by.Label.Matches(in) && !by.Label.Matches(out) {
				t.Errorf("%T is limited to the shard although the instance serves webhooks", obj)
			}
		}
	}
}
