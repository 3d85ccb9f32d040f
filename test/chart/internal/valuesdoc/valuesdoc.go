// Package valuesdoc turns the chart's values.yaml into the values table of the chart's README: one
// row per key whose comment starts with "# -- " (the helm-docs convention the file follows), with
// the key's path, its default as written, and the comment. chart-sync (`make generate`) writes the
// table between the README's markers; a test checks the committed README holds the current one.
package valuesdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Markers enclose the generated table in the README.
const (
	StartMarker = "<!-- values-table:start (generated from values.yaml by `make generate`; do not edit) -->"
	EndMarker   = "<!-- values-table:end -->"
)

// Row is one documented value.
type Row struct {
	// Key is the value's dotted path, e.g. manager.image.repository.
	Key string
	// Default is the value in values.yaml, as compact JSON.
	Default string
	// Doc is the comment after "-- ", its lines joined.
	Doc string
}

// Rows returns the documented values of values, in file order.
func Rows(values []byte) ([]Row, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, fmt.Errorf("parsing values.yaml: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("values.yaml is not a mapping")
	}
	var rows []Row
	if err := walk(doc.Content[0], "", &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

func walk(m *yaml.Node, prefix string, rows *[]Row) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		path := k.Value
		if prefix != "" {
			path = prefix + "." + k.Value
		}
		if text, ok := docComment(k.HeadComment); ok {
			def, err := compact(v)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			*rows = append(*rows, Row{Key: path, Default: def, Doc: text})
		}
		if v.Kind == yaml.MappingNode {
			if err := walk(v, path, rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// docComment returns the text of the last "# -- " paragraph of a head comment (what comes
// before it is a section's comment, not the key's).
func docComment(head string) (string, bool) {
	lines := strings.Split(head, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "# -- ") {
			start = i
		}
	}
	if start < 0 {
		return "", false
	}
	var parts []string
	for i, l := range lines[start:] {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if i == 0 {
			l = strings.TrimSpace(strings.TrimPrefix(l, "--"))
		}
		if l == "" {
			break
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " "), true
}

// compact renders a value as compact JSON (null, "", 1, {}, ["a"], {"a":1}).
func compact(v *yaml.Node) (string, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return "", err
	}
	return strings.TrimSpace(buf.String()), nil
}

// Table renders rows as a Markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| key | default | description |\n| --- | --- | --- |\n")
	for _, r := range rows {
		def := r.Default
		if len(def) > 80 {
			def = def[:77] + "..."
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", r.Key, cell(def), cell(r.Doc))
	}
	return b.String()
}

// cell escapes what would end a Markdown table cell or read as HTML.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}

// Update returns readme with the text between the markers replaced by table; it fails when the
// markers are missing.
func Update(readme, table string) (string, error) {
	i := strings.Index(readme, StartMarker)
	j := strings.Index(readme, EndMarker)
	if i < 0 || j < i {
		return "", fmt.Errorf("the README has no %q ... %q section", StartMarker, EndMarker)
	}
	return readme[:i+len(StartMarker)] + "\n" + table + readme[j:], nil
}
