package collector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1beta1"
)

func TestWrittenStatusReplacesAnOlderCachedStatus(t *testing.T) {
	col := func(rv, ready string) *v1beta1.OpenTelemetryCollector {
		c := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: rv}}
		c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionStatus(ready)}}
		return c
	}
	var w writtenStatuses
	if w.catchUp(col("5", "False")) {
		t.Fatal("nothing written yet: the cached status stands")
	}
	w.record(col("10", "True"))

	stale := col("9", "False")
	if !w.catchUp(stale) || stale.Status.Conditions[0].Status != metav1.ConditionTrue || stale.ResourceVersion != "9" {
		t.Fatalf("a cached copy older than the write gets the written status (and keeps its resourceVersion): %+v", stale)
	}
	stale.Status.Conditions[0].Status = "Unknown"
	if again := col("9", "False"); !w.catchUp(again) || again.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatal("the remembered status is a copy the caller cannot change")
	}
	for _, rv := range []string{"10", "11", "not-a-number"} {
		if c := col(rv, "False"); w.catchUp(c) || c.Status.Conditions[0].Status != metav1.ConditionFalse {
			t.Errorf("resourceVersion %s (the write itself, a later change, or not comparable): the cached status stands", rv)
		}
	}
	w.forget(types.NamespacedName{Namespace: "ns", Name: "c"})
	if w.catchUp(col("9", "False")) {
		t.Error("a forgotten collector has no written status")
	}
}
