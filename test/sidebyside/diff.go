package sidebyside

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Difference is one field whose value differs between the two objects compared.
type Difference struct {
	// Path names the field: map keys joined by dots (a key with a dot or slash in brackets), list
	// entries by their name ([name], or [mountPath] for volumeMounts) or by index ([0]). A path
	// ending in "(order)" compares the order of a named list's entries.
	Path string
	// Upstream and Ours are the values as compact JSON; Absent when the object lacks the field.
	Upstream, Ours string
}

// Absent stands for a field one of the two objects does not have.
const Absent = "<absent>"

func (d Difference) String() string {
	return fmt.Sprintf("%s: upstream %s, ours %s", d.Path, d.Upstream, d.Ours)
}

// Replacement rewrites every match of Re in an object's JSON to With before the comparison.
type Replacement struct {
	Re   *regexp.Regexp
	With string
}

// UIDs matches the UIDs the API server gives objects.
var UIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// Normalizer turns an object into the map Diff walks.
type Normalizer struct {
	// Replace is applied, in order, to the object's JSON.
	Replace []Replacement
	// KeepStatus keeps the status (dropped by default: a generated object's status is the
	// cluster's, not the operator's).
	KeepStatus bool
}

// metaDropped are the metadata fields the API server sets differently for every object.
var metaDropped = []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace", "generation"}

// Normalize applies the replacements, then drops the fields the API server sets differently for
// every object (uid, resourceVersion, timestamps, managedFields, namespace, generation, the
// owner references' uids; the name when it was generated) and, unless KeepStatus, the status.
func (n Normalizer) Normalize(obj any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	for _, r := range n.Replace {
		b = r.Re.ReplaceAll(b, []byte(r.With))
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if !n.KeepStatus {
		delete(m, "status")
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, k := range metaDropped {
			delete(md, k)
		}
		if _, ok := md["generateName"]; ok {
			delete(md, "name")
		}
		if refs, ok := md["ownerReferences"].([]any); ok {
			for _, r := range refs {
				delete(r.(map[string]any), "uid")
			}
		}
	}
	return m, nil
}

// Diff compares two normalized values field by field and returns every difference, sorted by
// path as found (maps by key, named lists in upstream's order, then entries only ours has).
func Diff(path string, up, ours any) []Difference {
	switch u := up.(type) {
	case map[string]any:
		if o, ok := ours.(map[string]any); ok {
			return diffMaps(path, u, o)
		}
	case []any:
		if o, ok := ours.([]any); ok {
			return diffLists(path, u, o)
		}
	}
	if EqualJSON(up, ours) {
		return nil
	}
	return []Difference{{Path: path, Upstream: Render(up), Ours: Render(ours)}}
}

// UnionKeys lists the keys of both maps, sorted.
func UnionKeys[V any](a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func diffMaps(path string, up, ours map[string]any) []Difference {
	var out []Difference
	for _, k := range UnionKeys(up, ours) {
		uv, uok := up[k]
		ov, ook := ours[k]
		p := joinKey(path, k)
		switch {
		case uok && ook:
			out = append(out, Diff(p, uv, ov)...)
		case uok:
			out = append(out, Difference{Path: p, Upstream: Render(uv), Ours: Absent})
		default:
			out = append(out, Difference{Path: p, Upstream: Absent, Ours: Render(ov)})
		}
	}
	return out
}

// diffLists compares named lists (containers, env, volumes, mounts, ports, ...) entry by entry
// under their names, then their order; other lists of the same length index by index, and lists
// of different lengths as a whole.
func diffLists(path string, up, ours []any) []Difference {
	field := "name"
	if strings.HasSuffix(path, "volumeMounts") {
		field = "mountPath"
	}
	uk, uok := keyed(up, field)
	ok, ook := keyed(ours, field)
	if !uok || !ook {
		if len(up) != len(ours) {
			if EqualJSON(up, ours) {
				return nil
			}
			return []Difference{{Path: path, Upstream: Render(up), Ours: Render(ours)}}
		}
		var out []Difference
		for i := range up {
			out = append(out, Diff(fmt.Sprintf("%s[%d]", path, i), up[i], ours[i])...)
		}
		return out
	}
	um, om := map[string]any{}, map[string]any{}
	for i, k := range uk {
		um[k] = up[i]
	}
	for i, k := range ok {
		om[k] = ours[i]
	}
	var out []Difference
	for _, k := range uk {
		p := path + "[" + k + "]"
		if ov, found := om[k]; found {
			out = append(out, Diff(p, um[k], ov)...)
		} else {
			out = append(out, Difference{Path: p, Upstream: Render(um[k]), Ours: Absent})
		}
	}
	for _, k := range ok {
		if _, found := um[k]; !found {
			out = append(out, Difference{Path: path + "[" + k + "]", Upstream: Absent, Ours: Render(om[k])})
		}
	}
	uc, oc := common(uk, om), common(ok, um)
	if strings.Join(uc, ",") != strings.Join(oc, ",") {
		out = append(out, Difference{Path: path + " (order)", Upstream: strings.Join(uc, ","), Ours: strings.Join(oc, ",")})
	}
	return out
}

// keyed returns the entries' keys (the string field named field; a repeated key gets #2, #3, ...)
// and whether every entry has one.
func keyed(list []any, field string) ([]string, bool) {
	if len(list) == 0 {
		return nil, true
	}
	seen := map[string]int{}
	keys := make([]string, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		k, ok := m[field].(string)
		if !ok {
			return nil, false
		}
		seen[k]++
		if seen[k] > 1 {
			k = fmt.Sprintf("%s#%d", k, seen[k])
		}
		keys[i] = k
	}
	return keys, true
}

// common returns the keys that other also has, in keys' order.
func common(keys []string, other map[string]any) []string {
	var out []string
	for _, k := range keys {
		if _, ok := other[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func joinKey(path, k string) string {
	if strings.ContainsAny(k, "./") {
		return path + "[" + k + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// EqualJSON says whether a and b render to the same JSON.
func EqualJSON(a, b any) bool { return Render(a) == Render(b) }

// Render is v as compact JSON, without HTML escapes (commands hold <, > and &).
func Render(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
