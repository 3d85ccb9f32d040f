package injectdiff

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// difference is one field whose value differs between the two admitted objects.
type difference struct {
	// Path names the field: map keys joined by dots (a key with a dot or slash in brackets), list
	// entries by their name ([name], or [mountPath] for volumeMounts) or by index ([0]). A path
	// ending in "(order)" compares the order of a named list's entries.
	Path string
	// Upstream and Ours are the values as compact JSON; absent when the object lacks the field.
	Upstream, Ours string
}

// absent stands for a field one of the two objects does not have.
const absent = "<absent>"

func (d difference) String() string {
	return fmt.Sprintf("%s: upstream %s, ours %s", d.Path, d.Upstream, d.Ours)
}

// sideNames matches the namespace names of both sides (injdiff-upstream-<x>, injdiff-otelop-<x>),
// and apiAccess the random suffix of the service account token volume.
var (
	sideNames = regexp.MustCompile(`injdiff-(upstream|otelop)-`)
	apiAccess = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
	uid       = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// normalize turns an admitted object into the map the comparison walks: the namespace names of
// either side become injdiff-<side>-<x>, UIDs (of the owners, in resource attributes) <uid>, the
// token volume's random suffix goes, and so do the
// fields the API server sets differently for every object (uid, resourceVersion, timestamps,
// managedFields, namespace, status; the name when it was generated).
func normalize(obj any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	b = sideNames.ReplaceAll(b, []byte("injdiff-<side>-"))
	b = apiAccess.ReplaceAll(b, []byte("kube-api-access-<random>"))
	b = uid.ReplaceAll(b, []byte("<uid>"))
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace", "generation"} {
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

// diff compares two normalized values field by field and returns every difference, sorted by
// path as found (maps by key, named lists in upstream's order, then entries only ours has).
func diff(path string, up, ours any) []difference {
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
	if equalJSON(up, ours) {
		return nil
	}
	return []difference{{Path: path, Upstream: render(up), Ours: render(ours)}}
}

func diffMaps(path string, up, ours map[string]any) []difference {
	keys := map[string]bool{}
	for k := range up {
		keys[k] = true
	}
	for k := range ours {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []difference
	for _, k := range sorted {
		uv, uok := up[k]
		ov, ook := ours[k]
		p := joinKey(path, k)
		switch {
		case uok && ook:
			out = append(out, diff(p, uv, ov)...)
		case uok:
			out = append(out, difference{Path: p, Upstream: render(uv), Ours: absent})
		default:
			out = append(out, difference{Path: p, Upstream: absent, Ours: render(ov)})
		}
	}
	return out
}

// diffLists compares named lists (containers, env, volumes, mounts, ...) entry by entry under
// their names, then their order; other lists of the same length index by index, and lists of
// different lengths as a whole.
func diffLists(path string, up, ours []any) []difference {
	field := "name"
	if strings.HasSuffix(path, "volumeMounts") {
		field = "mountPath"
	}
	uk, uok := keyed(up, field)
	ok, ook := keyed(ours, field)
	if !uok || !ook {
		if len(up) != len(ours) {
			if equalJSON(up, ours) {
				return nil
			}
			return []difference{{Path: path, Upstream: render(up), Ours: render(ours)}}
		}
		var out []difference
		for i := range up {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), up[i], ours[i])...)
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
	var out []difference
	for _, k := range uk {
		p := path + "[" + k + "]"
		if ov, found := om[k]; found {
			out = append(out, diff(p, um[k], ov)...)
		} else {
			out = append(out, difference{Path: p, Upstream: render(um[k]), Ours: absent})
		}
	}
	for _, k := range ok {
		if _, found := um[k]; !found {
			out = append(out, difference{Path: path + "[" + k + "]", Upstream: absent, Ours: render(om[k])})
		}
	}
	uc, oc := common(uk, om), common(ok, um)
	if strings.Join(uc, ",") != strings.Join(oc, ",") {
		out = append(out, difference{Path: path + " (order)", Upstream: strings.Join(uc, ","), Ours: strings.Join(oc, ",")})
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

func equalJSON(a, b any) bool { return render(a) == render(b) }

// render is v as compact JSON, without HTML escapes (commands hold <, > and &).
func render(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
