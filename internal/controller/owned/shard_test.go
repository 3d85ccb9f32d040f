package owned

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		flag       string
		match, not []labels.Set
	}{
		{flag: "", match: []labels.Set{{}, {ShardLabel: "a"}}},
		{flag: "team-a", match: []labels.Set{{ShardLabel: "team-a"}}, not: []labels.Set{{}, {ShardLabel: "team-b"}}},
		{flag: "!" + ShardLabel, match: []labels.Set{{}, {"other": "x"}}, not: []labels.Set{{ShardLabel: "a"}}},
		{flag: ShardLabel + " in (a, b)", match: []labels.Set{{ShardLabel: "a"}, {ShardLabel: "b"}}, not: []labels.Set{{ShardLabel: "c"}}},
	} {
		sel, err := ParseShard(tc.flag)
		if err != nil {
			t.Fatalf("%q: %v", tc.flag, err)
		}
		for _, l := range tc.match {
			if !sel.Matches(l) {
				t.Errorf("%q (%s) does not match %v", tc.flag, sel, l)
			}
		}
		for _, l := range tc.not {
			if sel.Matches(l) {
				t.Errorf("%q (%s) matches %v", tc.flag, sel, l)
			}
		}
	}
	if _, err := ParseShard("a=b=c"); err == nil || !strings.Contains(err.Error(), "--shard") {
		t.Errorf("a bad selector gave %v; want an error naming --shard", err)
	}
}

func TestShardLeaseID(t *testing.T) {
	everything, _ := ParseShard("")
	a, _ := ParseShard("a")
	b, _ := ParseShard("b")
	if got := ShardLeaseID("lock", everything); got != "lock" {
		t.Errorf("no shard: %q; want the base name", got)
	}
	la, lb := ShardLeaseID("lock", a), ShardLeaseID("lock", b)
	if la == lb || !strings.HasPrefix(la, "lock-shard-") || la != ShardLeaseID("lock", a) {
		t.Errorf("shard leases %q, %q: want distinct, stable, prefixed names", la, lb)
	}
}
