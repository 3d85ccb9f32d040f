package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field-level differences, for a plan before apply (render --diff). They are decided as Apply
// decides whether to write: a desired field differs when Contains would not find it in the live
// object (server defaults and other managers' fields are not differences), and a field is
// removed when our field manager's Apply entry owns it and the desired state no longer sets it.

// FieldChange is one field an apply would change.
type FieldChange struct {
	// Path names the field: map keys with dots ("spec.replicas"), list elements by their name
	// or key ("containers[otc-container]"), else by index; keys with other characters quoted
	// (`annotations["opentelemetry-operator-config/sha256"]`).
	Path string `json:"path"`
	// Old is the live value (absent when Added), New the desired one (absent when Removed).
	Old any `json:"old,omitempty"`
	New any `json:"new,omitempty"`
	// Added: the live object does not have the field. Removed: the apply removes it.
	Added   bool `json:"added,omitempty"`
	Removed bool `json:"removed,omitempty"`
}

// Drift returns the fields that applying desired over live would change, sending no write: none
// when Apply would send nothing (the same decision, see inPlace). live must exist; it is read in
// full from the API server when it lacks content or managedFields.
func (a *Applier) Drift(ctx context.Context, desired, live client.Object) ([]FieldChange, error) {
	u, err := ToUnstructured(desired)
	if err != nil {
		return nil, err
	}
	hash, err := hashOf(u)
	if err != nil {
		return nil, err
	}
	v, err := a.inPlace(ctx, u, hash, live)
	if err != nil || v.inPlace {
		return nil, err
	}
	full, err := a.fullObject(ctx, u, live)
	if err != nil || full == nil {
		return nil, err
	}
	var owned map[string]any
	// An object the applier created holds no Apply entry yet: nothing is known to be ours
	// beyond the desired fields, so nothing is reported removed.
	if entry := ownEntry(full, a.owner); entry != nil && entry.FieldsV1 != nil && !v.created {
		owned = map[string]any{}
		if err := json.Unmarshal(entry.FieldsV1.GetRawBytes(), &owned); err != nil {
			return nil, fmt.Errorf("reading managedFields of %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return Diff(full.Object, u.Object, owned), nil
}

// Diff lists the fields of desired that live does not hold with the same value, then the fields
// of the owned field set (a managedFields FieldsV1, nil for none) that desired no longer sets, in
// path order. Top-level apiVersion, kind and status are not compared, nor server-set metadata.
func Diff(live, desired, owned map[string]any) []FieldChange {
	var out []FieldChange
	for _, k := range sortedKeys(desired) {
		if k == "apiVersion" || k == "kind" || k == "status" {
			continue
		}
		diffValue(&out, k, live[k], desired[k])
	}
	if owned != nil {
		removedMap(&out, "", owned, desired, live)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	// A list element both walks find missing is reported once.
	return slices.CompactFunc(out, func(a, b FieldChange) bool { return a.Path == b.Path })
}

// diffValue mirrors contains: what it would refuse is recorded.
func diffValue(out *[]FieldChange, path string, have, want any) {
	switch w := want.(type) {
	case nil:
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			if len(w) > 0 || have != nil {
				recordChange(out, path, have, want)
			}
			return
		}
		for _, k := range sortedKeys(w) {
			diffValue(out, join(path, k), h[k], w[k])
		}
	case []any:
		h, ok := have.([]any)
		if !ok {
			if len(w) > 0 || have != nil {
				recordChange(out, path, have, want)
			}
			return
		}
		diffList(out, path, h, w)
	default:
		if !scalarEqual(have, want) {
			recordChange(out, path, have, want)
		}
	}
}

// diffList compares lists as contains does (same length, element by element); lists of named
// elements are reported by name, so that an element added in the middle is one change.
func diffList(out *[]FieldChange, path string, have, want []any) {
	if contains(have, want) {
		return
	}
	hn, hok := names(have)
	wn, wok := names(want)
	if !hok || !wok {
		if len(have) != len(want) {
			recordChange(out, path, have, want)
			return
		}
		for i := range want {
			diffValue(out, fmt.Sprintf("%s[%d]", path, i), have[i], want[i])
		}
		return
	}
	before := len(*out)
	byName := map[string]any{}
	for i, n := range hn {
		byName[n] = have[i]
	}
	wanted := map[string]bool{}
	for i, n := range wn {
		wanted[n] = true
		diffValue(out, path+"["+n+"]", byName[n], want[i])
	}
	for i, n := range hn {
		if !wanted[n] {
			*out = append(*out, FieldChange{Path: path + "[" + n + "]", Old: have[i], Removed: true})
		}
	}
	if len(*out) == before { // same elements, another order
		recordChange(out, path, have, want)
	}
}

// names returns the "name" of every element when each is an object with a distinct one.
func names(list []any) ([]string, bool) {
	out := make([]string, 0, len(list))
	seen := map[string]bool{}
	for _, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok || n == "" || seen[n] {
			return nil, false
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, true
}

func recordChange(out *[]FieldChange, path string, have, want any) {
	*out = append(*out, FieldChange{Path: path, Old: have, New: want, Added: have == nil})
}

// removedMap reports the fields of the owned set o that d no longer sets; l is the live value.
func removedMap(out *[]FieldChange, path string, o map[string]any, d any, l any) {
	dm, _ := d.(map[string]any)
	lm, _ := l.(map[string]any)
	for _, k := range sortedKeys(o) {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue
		}
		p := join(path, name)
		dv, present := dm[name]
		if !present || dv == nil {
			if lv, ok := lm[name]; ok {
				*out = append(*out, FieldChange{Path: p, Old: lv, Removed: true})
			}
			continue
		}
		sub, _ := o[k].(map[string]any)
		if len(sub) == 0 {
			continue
		}
		if dl, ok := dv.([]any); ok {
			ll, _ := lm[name].([]any)
			removedList(out, p, sub, dl, ll)
			continue
		}
		removedMap(out, p, sub, dv, lm[name])
	}
}

// removedList reports the owned elements ("k:" keyed, "v:" set values) that d no longer has.
func removedList(out *[]FieldChange, path string, o map[string]any, d, l []any) {
	for _, k := range sortedKeys(o) {
		sub, _ := o[k].(map[string]any)
		switch {
		case strings.HasPrefix(k, "k:"):
			key := map[string]any{}
			if err := json.Unmarshal([]byte(k[2:]), &key); err != nil {
				continue
			}
			del, dfound := findKeyed(d, key)
			lel, lfound := findKeyed(l, key)
			label := keyLabel(key)
			if n, ok := lel["name"].(string); ok && n != "" {
				label = n // as diffList names it
			}
			p := path + "[" + label + "]"
			if !dfound {
				if lfound {
					*out = append(*out, FieldChange{Path: p, Old: lel, Removed: true})
				}
				continue
			}
			removedMap(out, p, sub, del, lel)
		case strings.HasPrefix(k, "v:"):
			if !listHasValue(d, k[2:]) && listHasValue(l, k[2:]) {
				var val any
				_ = json.Unmarshal([]byte(k[2:]), &val)
				*out = append(*out, FieldChange{Path: path + "[" + fmt.Sprint(val) + "]", Old: val, Removed: true})
			}
		}
	}
}

func findKeyed(list []any, key map[string]any) (map[string]any, bool) {
	for _, el := range list {
		if m, ok := el.(map[string]any); ok && keyMatches(key, m) {
			return m, true
		}
	}
	return nil, false
}

// keyLabel names a list element by its key: its name when it has one, else the key's values.
func keyLabel(key map[string]any) string {
	if n, ok := key["name"].(string); ok {
		return n
	}
	var parts []string
	for _, k := range sortedKeys(key) {
		parts = append(parts, fmt.Sprint(key[k]))
	}
	return strings.Join(parts, "/")
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + fmt.Sprintf("%q", key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FullObject reads obj's kind, namespace and name from the API server as unstructured: the
// object with its content and managedFields, as Drift compares it.
func FullObject(ctx context.Context, c client.Reader, obj client.Object) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, err
	}
	return u, nil
}
