package sidebyside

import (
	"reflect"
	"strings"
	"testing"
)

// TestCheckFailsOnNewAndOnVanishedDifferences: the table is a contract both ways.
func TestCheckFailsOnNewAndOnVanishedDifferences(t *testing.T) {
	found := []Observed{
		{Case: "java", Difference: Difference{Path: "x", Upstream: "1", Ours: "2"}},
		{Case: "java", Difference: Difference{Path: "y", Upstream: "1", Ours: "2"}},
	}
	table := []Expected{
		{Cases: []string{"java"}, Path: "x", Upstream: "1", Ours: "*"},
		{Cases: []string{"java", "nodejs"}, Path: "y", Upstream: "1", Ours: "2"},
		{Cases: []string{"java"}, Path: "z", Upstream: "*", Ours: "*"},
	}
	got := Check(found, table)
	want := []string{
		"listed difference no longer found in nodejs: y (upstream 1, ours 2): remove it from the table and from docs/differences.md",
		"listed difference no longer found in java: z (upstream *, ours *): remove it from the table and from docs/differences.md",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("check:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	found = append(found, Observed{Case: "java", Difference: Difference{Path: "x", Upstream: "3", Ours: "2"}})
	if got := Check(found, table[:2]); len(got) != 2 || !strings.HasPrefix(got[0], "new difference in java: x: upstream 3") {
		t.Errorf("a value the table does not list: %q", got)
	}
}
