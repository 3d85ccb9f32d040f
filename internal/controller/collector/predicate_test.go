package collector

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func pdbMeta(rv string, generation int64, labels map[string]string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "c-collector", Namespace: "ns", ResourceVersion: rv, Generation: generation, Labels: labels}}
	m.SetGroupVersionKind(policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"))
	return m
}

func TestOwnedChangePredicateIgnoresStatusOnlyChangesOfMetadataObjectsWithAGeneration(t *testing.T) {
	p := ownedChangePredicate{}
	l := map[string]string{"a": "b"}
	for _, tc := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"resync (same resourceVersion)", pdbMeta("1", 1, l), pdbMeta("1", 1, l), false},
		{"status only (PDB status update)", pdbMeta("1", 1, l), pdbMeta("2", 1, l), false},
		{"spec changed (generation moved)", pdbMeta("1", 1, l), pdbMeta("2", 2, l), true},
		{"labels changed", pdbMeta("1", 1, l), pdbMeta("2", 1, map[string]string{"a": "c"}), true},
		{"no generation (ConfigMap, Service): any change", pdbMeta("1", 0, l), pdbMeta("2", 0, l), true},
		{"typed workload: status changes count",
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1", Generation: 1}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "2", Generation: 1}}, true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: Update = %v, want %v", tc.name, got, tc.want)
		}
	}
	del := pdbMeta("2", 1, l)
	now := metav1.Now()
	del.DeletionTimestamp = &now
	if !p.Update(event.UpdateEvent{ObjectOld: pdbMeta("1", 1, l), ObjectNew: del}) {
		t.Error("a deletion must get through")
	}
}
