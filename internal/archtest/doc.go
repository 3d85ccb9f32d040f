package archtest

import (
	"fmt"
	"strings"
)

// The markers around the generated layer table in docs/architecture.md.
const (
	BeginMarker = "<!-- layers:begin: generated from internal/archtest/layers.go by `go test ./internal/archtest -update`; do not edit -->"
	EndMarker   = "<!-- layers:end -->"
)

// Table renders layers as the markdown table of docs/architecture.md, highest layer first.
func Table(layers []Layer, exceptions []Exception) string {
	var b strings.Builder
	b.WriteString("| layer | packages | what | imports inside the layer |\n| --- | --- | --- | --- |\n")
	for _, l := range layers {
		pk := make([]string, len(l.Packages))
		for i, p := range l.Packages {
			pk[i] = "`" + p + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", l.Name, strings.Join(pk, ", "),
			strings.ReplaceAll(l.What, "|", `\|`), siblingText(l.Siblings))
	}
	if len(exceptions) == 0 {
		b.WriteString("\nAccepted exceptions: none.\n")
	} else {
		b.WriteString("\nAccepted exceptions (each one a debt):\n\n")
		for _, e := range exceptions {
			fmt.Fprintf(&b, "- `%s` imports `%s`: %s\n", e.From, e.To, e.Why)
		}
	}
	return b.String()
}

func siblingText(s Siblings) string {
	switch s {
	case AnySibling:
		return "any"
	case SameComponent:
		return "within one component"
	}
	return "none"
}

// Splice replaces what lies between the markers in doc with table; ok is false when the markers
// are missing.
func Splice(doc, table string) (string, bool) {
	i := strings.Index(doc, BeginMarker)
	j := strings.Index(doc, EndMarker)
	if i < 0 || j < i {
		return doc, false
	}
	return doc[:i+len(BeginMarker)] + "\n" + table + doc[j:], true
}
