package collectorconfig

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// relPath is a field path relative to the config root: string elements are children, int
// elements are list indexes.
type relPath []any

// child returns a copy of p extended with the given elements.
func (p relPath) child(elems ...any) relPath {
	out := make(relPath, 0, len(p)+len(elems))
	out = append(out, p...)
	return append(out, elems...)
}

// under roots p at the given field path.
func (p relPath) under(root *field.Path) *field.Path {
	out := root
	for _, e := range p {
		switch v := e.(type) {
		case string:
			if out == nil {
				out = field.NewPath(v)
			} else {
				out = out.Child(v)
			}
		case int:
			if out == nil {
				out = field.NewPath("").Index(v)
			} else {
				out = out.Index(v)
			}
		}
	}
	return out
}

// String renders p without a root, e.g. "receivers.otlp".
func (p relPath) String() string {
	if len(p) == 0 {
		return "<root>"
	}
	return p.under(nil).String()
}

// problem is a structural defect found while parsing, reported by Validate under the caller's root.
type problem struct {
	path   relPath
	typ    field.ErrorType
	value  any
	detail string
}

func (p problem) toError(root *field.Path) *field.Error {
	return &field.Error{Type: p.typ, Field: p.path.under(root).String(), BadValue: p.value, Detail: p.detail}
}

// typeName describes the JSON type of v for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any, []string:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, float32, int, int32, int64, uint, uint32, uint64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// asMap returns v as an object, and whether it is one.
func asMap(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

// asList returns v as a list of values, and whether it is one.
func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// getString returns m[key] when it is a string.
func getString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// getMap returns m[key] when it is an object.
func getMap(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

// getStrings returns the string elements of the list m[key], skipping anything else.
func getStrings(m map[string]any, key string) []string {
	l, _ := asList(m[key])
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// getBool returns m[key] when it is a boolean.
func getBool(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// deepCopy copies JSON-like values (objects, lists and scalars); other values are returned as is.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	case []string:
		return append([]string(nil), t...)
	}
	return v
}

// deepCopyMap copies an object and everything below it; a nil map stays nil.
func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopy(v)
	}
	return out
}
