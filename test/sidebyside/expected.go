package sidebyside

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Observed is a difference found in one case (a pod, an object, a status).
type Observed struct {
	Case string
	Difference
}

// Expected is a difference the comparison is known to find: in each of Cases, the field at Path
// has the value Upstream on upstream's side and Ours on ours ("*" matches any value), or, when
// Equivalent is set, values it accepts.
type Expected struct {
	Cases          []string
	Path           string
	Upstream, Ours string
	// Equivalent, when set, replaces the value match: the two values (JSON) differ only in ways
	// it ignores.
	Equivalent func(up, ours string) bool
	// Why the difference is there; docs/differences.md says the same.
	Why string
}

// Without returns names minus drop.
func Without(names []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}

// Check returns a message for every difference found that expected does not list, and for every
// listed difference that was not found in one of its cases.
func Check(found []Observed, expected []Expected) []string {
	var msgs []string
	matches := func(e Expected, f Observed) bool {
		if !slices.Contains(e.Cases, f.Case) || e.Path != f.Path {
			return false
		}
		if e.Equivalent != nil {
			return e.Equivalent(f.Upstream, f.Ours)
		}
		return (e.Upstream == "*" || e.Upstream == f.Upstream) && (e.Ours == "*" || e.Ours == f.Ours)
	}
	for _, f := range found {
		if !slices.ContainsFunc(expected, func(e Expected) bool { return matches(e, f) }) {
			msgs = append(msgs, fmt.Sprintf("new difference in %s: %s", f.Case, f.Difference))
		}
	}
	for _, e := range expected {
		for _, c := range e.Cases {
			if !slices.ContainsFunc(found, func(f Observed) bool { return f.Case == c && matches(e, f) }) {
				msgs = append(msgs, fmt.Sprintf("listed difference no longer found in %s: %s (upstream %s, ours %s): remove it from the table and from docs/differences.md",
					c, e.Path, e.Upstream, e.Ours))
			}
		}
	}
	return msgs
}

// Table renders the differences, one per line, sorted by case and path.
func Table(found []Observed) string {
	sorted := append([]Observed(nil), found...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Case != sorted[j].Case {
			return sorted[i].Case < sorted[j].Case
		}
		return sorted[i].Path < sorted[j].Path
	})
	var b strings.Builder
	for _, f := range sorted {
		fmt.Fprintf(&b, "  %-32s %s\n      upstream: %s\n      ours:     %s\n", f.Case, f.Path, f.Upstream, f.Ours)
	}
	return b.String()
}

// Dump writes both normalized objects of a case into dir (<name>.upstream.json,
// <name>.otelop.json), to read a difference whole; nothing when dir is empty.
func Dump(dir, name string, up, ours map[string]any) error {
	if dir == "" {
		return nil
	}
	for side, m := range map[string]map[string]any{Upstream: up, Otelop: ours} {
		b, _ := json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, name+"."+side+".json"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
