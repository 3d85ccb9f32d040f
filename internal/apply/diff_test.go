package apply

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDiffFollowsContains: what Contains accepts (server defaults, other managers' fields,
// numbers of another type) is no difference; what it refuses is, named by path.
func TestDiffFollowsContains(t *testing.T) {
	g := NewWithT(t)
	live := obj(t, `{"metadata":{"name":"a","annotations":{"x/y":"1","other":"kept"}},
		"spec":{"replicas":2,"template":{"spec":{"containers":[
			{"name":"c","image":"i:1","terminationMessagePath":"/dev/termination-log","env":[{"name":"A","value":"1"}]}]}}}}`)
	same := obj(t, `{"metadata":{"name":"a","annotations":{"x/y":"1"}},
		"spec":{"replicas":2.0,"template":{"spec":{"containers":[{"name":"c","image":"i:1","env":[{"name":"A","value":"1"}]}]}}}}`)
	g.Expect(Contains(live, same)).To(BeTrue())
	g.Expect(Diff(live, same, nil)).To(BeEmpty(), "the positive control: no false difference")

	changed := obj(t, `{"metadata":{"name":"a","annotations":{"x/y":"2"}},
		"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i:2","env":[{"name":"B","value":"2"},{"name":"A","value":"1"}]}]}}}}`)
	g.Expect(Contains(live, changed)).To(BeFalse())
	g.Expect(Diff(live, changed, nil)).To(Equal([]FieldChange{
		{Path: `metadata.annotations["x/y"]`, Old: "1", New: "2"},
		{Path: "spec.template.spec.containers[c].env[B]", New: map[string]any{"name": "B", "value": "2"}, Added: true},
		{Path: "spec.template.spec.containers[c].image", Old: "i:1", New: "i:2"},
	}))
}

// TestDiffRemovals: a field our manager owns and no longer sets is removed; one it never owned
// (another manager's, a default) is not.
func TestDiffRemovals(t *testing.T) {
	g := NewWithT(t)
	live := obj(t, `{"metadata":{"labels":{"a":"1","b":"2","theirs":"3"}},"spec":{"ports":[{"port":1,"protocol":"TCP","name":"x"},{"port":2,"protocol":"TCP","name":"y"}],"type":"ClusterIP"}}`)
	desired := obj(t, `{"metadata":{"labels":{"a":"1"}},"spec":{"ports":[{"port":1,"name":"x"}]}}`)
	owned := obj(t, `{"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}},"f:spec":{"f:ports":{
		"k:{\"port\":1,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}},
		"k:{\"port\":2,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}}}}}`)
	g.Expect(OwnsExactly(owned, desired)).To(BeFalse())
	g.Expect(Diff(live, desired, owned)).To(Equal([]FieldChange{
		{Path: "metadata.labels.b", Old: "2", Removed: true},
		{Path: "spec.ports[y]", Old: map[string]any{"port": float64(2), "protocol": "TCP", "name": "y"}, Removed: true},
	}))
}
