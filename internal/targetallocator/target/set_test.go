package target

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/labels"
)

type countingFilter struct {
	calls int
	drop  string
}

func (f *countingFilter) Relabel(_ string, l labels.Labels) (labels.Labels, bool) {
	f.calls++
	return l, l.Get("__address__") != f.drop
}

func group(lbls model.LabelSet, targets ...model.LabelSet) *targetgroup.Group {
	return &targetgroup.Group{Labels: lbls, Targets: targets}
}

func TestUpdateReportsChangesAndFiltersOnce(t *testing.T) {
	f := &countingFilter{drop: "b:1"}
	s := NewSet(f)
	tsets := map[string][]*targetgroup.Group{"job": {group(model.LabelSet{"env": "prod"},
		model.LabelSet{"__address__": "a:1"}, model.LabelSet{"__address__": "b:1"})}}
	added, removed := s.Update(tsets)
	if len(added) != 1 || len(removed) != 0 || added[0].TargetURL != "a:1" || added[0].Labels.Get("env") != "prod" {
		t.Fatalf("first update: +%v -%v", added, removed)
	}
	if f.calls != 2 {
		t.Fatalf("filter called %d times, want 2", f.calls)
	}
	added, removed = s.Update(tsets)
	if len(added)+len(removed) != 0 || f.calls != 2 {
		t.Fatalf("unchanged update: +%d -%d, filter calls %d", len(added), len(removed), f.calls)
	}
	added, removed = s.Update(map[string][]*targetgroup.Group{"job": {group(nil, model.LabelSet{"__address__": "c:1"})}})
	if len(added) != 1 || len(removed) != 1 || removed[0].TargetURL != "a:1" || s.Len() != 1 {
		t.Fatalf("replacement: +%v -%v len %d", added, removed, s.Len())
	}
}

// The identity is that of the merged label set: a target label overriding a group label counts
// with the target's value, and the same merged set split differently is the same target.
func TestIdentityIsTheMergedLabelSet(t *testing.T) {
	s := NewSet(nil)
	a := map[string][]*targetgroup.Group{"job": {group(model.LabelSet{"zone": "a", "env": "x"}, model.LabelSet{"__address__": "h:1", "env": "prod"})}}
	b := map[string][]*targetgroup.Group{"job": {group(model.LabelSet{"zone": "a"}, model.LabelSet{"__address__": "h:1", "env": "prod"})}}
	added, _ := s.Update(a)
	if got := added[0].Labels.Get("env"); got != "prod" {
		t.Fatalf("target label should override the group's: env=%s", got)
	}
	added, removed := s.Update(b)
	if len(added)+len(removed) != 0 {
		t.Fatalf("same merged labels seen as a change: +%d -%d", len(added), len(removed))
	}
	// Same labels in another job are another target; duplicates within a job are one.
	added, _ = s.Update(map[string][]*targetgroup.Group{
		"job":   {group(nil, model.LabelSet{"__address__": "h:1", "env": "prod", "zone": "a"}, model.LabelSet{"__address__": "h:1", "env": "prod", "zone": "a"})},
		"other": {group(nil, model.LabelSet{"__address__": "h:1", "env": "prod", "zone": "a"})},
	})
	if len(added) != 1 || added[0].JobName != "other" || s.Len() != 2 {
		t.Fatalf("added %v, len %d", added, s.Len())
	}
}

func TestNodeName(t *testing.T) {
	for want, l := range map[string]labels.Labels{
		"n1": labels.FromStrings(podNodeNameLabel, "n1"),
		"n2": labels.FromStrings(nodeNameLabel, "n2"),
		"n3": labels.FromStrings(endpointNodeNameLabel, "n3"),
		"n4": labels.FromStrings(sliceTargetKindLabel, "Node", sliceTargetNameLabel, "n4"),
		"":   labels.FromStrings(sliceTargetKindLabel, "Pod", sliceTargetNameLabel, "p"),
	} {
		if got := NewItem("j", l, 1).NodeName; got != want {
			t.Errorf("%v: node %q, want %q", l, got, want)
		}
	}
}

// TestForgetRebuildsAJobsTargets: forgetting a job returns its kept targets and the next update
// builds (and filters) them again; other jobs are untouched.
func TestForgetRebuildsAJobsTargets(t *testing.T) {
	s := NewSet(nil)
	tsets := map[string][]*targetgroup.Group{
		"a": {{Source: "a", Targets: []model.LabelSet{{"__address__": "x:1"}, {"__address__": "x:2"}}}},
		"b": {{Source: "b", Targets: []model.LabelSet{{"__address__": "y:1"}}}},
	}
	if added, _ := s.Update(tsets); len(added) != 3 {
		t.Fatalf("added %d, want 3", len(added))
	}
	removed := s.Forget(map[string]bool{"a": true})
	if len(removed) != 2 || s.Len() != 1 {
		t.Fatalf("forgot %d (len %d), want 2 (len 1)", len(removed), s.Len())
	}
	added, gone := s.Update(tsets)
	if len(added) != 2 || len(gone) != 0 || s.Len() != 3 {
		t.Fatalf("after forget: added %d removed %d len %d; want 2, 0, 3", len(added), len(gone), s.Len())
	}
}

// relabelAll keeps every target and returns its labels as they are; the set drops __meta_* from
// the identity, as Prometheus does after relabelling.
type relabelAll struct{}

func (relabelAll) Relabel(_ string, l labels.Labels) (labels.Labels, bool) { return l, true }

// TestTargetsEqualAfterRelabellingAreOne is issue 33, finding 3: two endpoints of one pod port
// (say, from two Services) differ only in __meta_* labels, so Prometheus sees one target; handing
// both out scraped it twice. One is handed out, the other waits behind it and takes its place
// when it goes, so the target is never lost either. Positive control: a target with another
// address is its own.
func TestTargetsEqualAfterRelabellingAreOne(t *testing.T) {
	s := NewSet(relabelAll{})
	a := model.LabelSet{"__address__": "10.0.0.1:80", "__meta_kubernetes_service_name": "svc-a"}
	b := model.LabelSet{"__address__": "10.0.0.1:80", "__meta_kubernetes_service_name": "svc-b"}
	other := model.LabelSet{"__address__": "10.0.0.2:80", "__meta_kubernetes_service_name": "svc-a"}
	upd := func(ts ...model.LabelSet) ([]*Item, []*Item) {
		return s.Update(map[string][]*targetgroup.Group{"job": {group(nil, ts...)}})
	}
	added, removed := upd(a, b, other)
	if len(added) != 2 || len(removed) != 0 || s.Len() != 2 || s.Duplicates() != 1 {
		t.Fatalf("a, b, other: +%d -%d len %d dups %d, want +2 -0 len 2 dups 1", len(added), len(removed), s.Len(), s.Duplicates())
	}
	handed := ""
	for _, it := range added {
		if it.TargetURL == "10.0.0.1:80" {
			handed = it.Labels.Get("__meta_kubernetes_service_name")
		}
	}
	if handed == "" {
		t.Fatal("the duplicated address was not handed out at all")
	}
	// The handed-out one goes: the other takes its place in the same update.
	rest := a
	if handed == "svc-a" {
		rest = b
	}
	added, removed = upd(rest, other)
	if len(added) != 1 || len(removed) != 1 || added[0].TargetURL != "10.0.0.1:80" || removed[0].Labels.Get("__meta_kubernetes_service_name") != handed || s.Len() != 2 || s.Duplicates() != 0 {
		t.Fatalf("after the handed-out one went: +%v -%v len %d dups %d", added, removed, s.Len(), s.Duplicates())
	}
	// The one that went comes back behind rest, which stays handed out; when it goes again,
	// nothing handed out changes.
	added, removed = upd(a, b, other)
	if len(added)+len(removed) != 0 || s.Duplicates() != 1 {
		t.Fatalf("a duplicate came back: +%v -%v dups %d", added, removed, s.Duplicates())
	}
	added, removed = upd(rest, other)
	if s.Len() != 2 || s.Duplicates() != 0 || len(added)+len(removed) != 0 {
		t.Fatalf("after a duplicate went: +%v -%v len %d dups %d", added, removed, s.Len(), s.Duplicates())
	}
	// Without a filter only equal label sets are one target, as upstream without filter_strategy.
	plain := NewSet(nil)
	added, _ = plain.Update(map[string][]*targetgroup.Group{"job": {group(nil, a, b)}})
	if len(added) != 2 {
		t.Fatalf("no filter: +%d, want 2", len(added))
	}
}
