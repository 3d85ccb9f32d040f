package owned

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func withRV(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
}

// TestPredicates: a resync (same resourceVersion) reaches the owner's reconcile and not the owned
// objects' watch; a real change reaches the owned objects' watch.
func TestPredicates(t *testing.T) {
	resync := event.UpdateEvent{ObjectOld: withRV("7"), ObjectNew: withRV("7")}
	change := event.UpdateEvent{ObjectOld: withRV("7"), ObjectNew: withRV("8")}
	if !(ResyncPredicate{}).Update(resync) || (ResyncPredicate{}).Update(change) {
		t.Error("ResyncPredicate must pass resyncs only")
	}
	if (ChangePredicate{}).Update(resync) || !(ChangePredicate{}).Update(change) {
		t.Error("ChangePredicate must pass real changes only")
	}
	if !(ChangePredicate{}).Create(event.CreateEvent{Object: withRV("1")}) {
		t.Error("ChangePredicate must pass creates")
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("abc", 5); got != "abc" {
		t.Errorf("truncate short = %q", got)
	}
	if got := truncate(strings.Repeat("x", 10), 4); got != "xxxx…" {
		t.Errorf("truncate long = %q", got)
	}
}
