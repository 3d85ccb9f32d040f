package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/otelop/otelop/internal/apply"
)

// marks are the text form's action markers.
var marks = map[Action]string{Create: "+", Update: "~", Recreate: "-/+", Delete: "-", Unchanged: "="}

// maxValue bounds a value printed in the text form (the JSON form has them whole).
const maxValue = 160

// WriteText prints p for a person: per collector, the objects that change with their fields,
// each workload's rollout, then a summary line ("No changes." when nothing would change).
func WriteText(w io.Writer, p Plan) error {
	var b strings.Builder
	var rolls []string
	for _, c := range p.Collectors {
		fmt.Fprintf(&b, "OpenTelemetryCollector %s/%s", c.Namespace, c.Name)
		switch {
		case c.Unmanaged:
			b.WriteString(": unmanaged (spec.managementState); the operator leaves its objects alone\n")
			continue
		case !c.Exists:
			b.WriteString(" (not in the cluster yet)")
		}
		b.WriteString(": " + counts(c) + "\n")
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		for _, o := range c.Objects {
			if o.Action == Unchanged {
				continue
			}
			fmt.Fprintf(&b, "  %s %s %s %s", marks[o.Action], o.Action, o.Kind, qualified(o.Namespace, o.Name))
			if r := o.Rollout; r != nil && o.Action != Create {
				switch {
				case o.Action == Delete:
					b.WriteString(" (its pods are deleted)")
				case r.Rolls:
					fmt.Fprintf(&b, " (pods roll: %s)", strings.Join(r.Reasons, ", "))
					rolls = append(rolls, fmt.Sprintf("%s %s (%s)", o.Kind, qualified(o.Namespace, o.Name), strings.Join(r.Reasons, ", ")))
				default:
					b.WriteString(" (pods do not roll)")
				}
			}
			b.WriteString("\n")
			for _, ch := range o.Changes {
				fmt.Fprintf(&b, "      %s: %s\n", ch.Path, describe(ch))
			}
		}
	}
	switch {
	case !p.Changes:
		b.WriteString("No changes: the cluster matches the input.\n")
	case len(rolls) == 0:
		b.WriteString("Changes: no pods roll.\n")
	default:
		fmt.Fprintf(&b, "Changes: pods roll in %s.\n", strings.Join(rolls, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints p as indented JSON.
func WriteJSON(w io.Writer, p Plan) error {
	if p.Collectors == nil {
		p.Collectors = []Collector{}
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func counts(c Collector) string {
	n := map[Action]int{}
	for _, o := range c.Objects {
		n[o.Action]++
	}
	if !c.Changed() {
		return fmt.Sprintf("no changes (%d objects unchanged)", n[Unchanged])
	}
	var parts []string
	for _, a := range []Action{Create, Update, Recreate, Delete, Unchanged} {
		if n[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n[a], a))
		}
	}
	return strings.Replace(strings.Join(parts, ", "), "to unchanged", "unchanged", 1)
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func describe(ch apply.FieldChange) string {
	switch {
	case ch.Removed:
		return value(ch.Old) + " -> (removed)"
	case ch.Added:
		return "(none) -> " + value(ch.New)
	}
	return value(ch.Old) + " -> " + value(ch.New)
}

func value(v any) string {
	data, err := json.Marshal(v)
	s := string(data)
	if err != nil {
		s = fmt.Sprint(v)
	}
	if len(s) > maxValue {
		return fmt.Sprintf("%s… (%d bytes)", s[:maxValue], len(s))
	}
	return s
}
