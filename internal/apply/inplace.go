package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The applier decides from the live object whether the desired state is already in place, so that
// neither a restart (which loses what the applier remembers) nor taking over objects another tool
// made with the same content sends a request. The desired state is in place when
//
//   - every field of desired is present in live with the same value (Contains: live may hold more,
//     e.g. server defaults and other managers' fields), and
//   - nothing has to be removed: either our field manager's Apply entry in live's managedFields
//     covers exactly the fields of desired (OwnsExactly), so no field we applied before and no
//     longer want is left, or the object was created by this applier (CreateMissing) from a
//     desired state with the same hash, so nothing was dropped since (see create.go), or our
//     manager has no entry at all (the object was made by someone else,
//     e.g. upstream's operator with Update requests: it is accepted as it is, and extra fields it
//     carries stay until our desired state changes and we apply it).

// verdict is inPlace's answer.
type verdict struct {
	// inPlace: nothing needs to be sent.
	inPlace bool
	// resourceVersion is the version of the object the verdict is for.
	resourceVersion string
	// created: the object holds Update entries of the applier's creates (create.go), which must
	// be converted before an apply.
	created bool
}

// inPlace reports whether desired is already in place in live. live may be metadata-only or have
// its managedFields stripped by a cache; the full object is then read from the API server (a
// read, never a write).
func (a *Applier) inPlace(ctx context.Context, desired *unstructured.Unstructured, hash string, live client.Object) (verdict, error) {
	full, err := a.fullObject(ctx, desired, live)
	if err != nil || full == nil {
		return verdict{}, err
	}
	v := verdict{resourceVersion: full.GetResourceVersion()}
	created := a.createEntries(full)
	v.created = len(created) > 0
	if !Contains(full.Object, desired.Object) {
		return v, nil
	}
	entry := ownEntry(full, a.owner)
	if v.created {
		// Created by this applier and never applied since: in place only while the desired state
		// is the one created. An Apply entry beside it (an apply that did not convert it) means
		// the entry must be converted first.
		v.inPlace = entry == nil && len(created) == 1 && created[0] == a.createManager(hash)
		return v, nil
	}
	if entry == nil {
		v.inPlace = true
		return v, nil
	}
	if entry.APIVersion != desired.GetAPIVersion() || entry.FieldsV1 == nil {
		return v, nil
	}
	owned := map[string]any{}
	if err := json.Unmarshal(entry.FieldsV1.GetRawBytes(), &owned); err != nil {
		return v, fmt.Errorf("reading managedFields of %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	v.inPlace = OwnsExactly(owned, desired.Object)
	return v, nil
}

// fullObject returns live as unstructured with its content and managedFields, reading it from the
// API server when live lacks either (a metadata-only or managedFields-stripped cache object).
func (a *Applier) fullObject(ctx context.Context, desired *unstructured.Unstructured, live client.Object) (*unstructured.Unstructured, error) {
	if _, metaOnly := live.(*metav1.PartialObjectMetadata); !metaOnly && len(live.GetManagedFields()) > 0 {
		if u, ok := live.(*unstructured.Unstructured); ok && hasContent(u) {
			return u, nil
		}
		if _, ok := live.(*unstructured.Unstructured); !ok {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
			if err != nil {
				return nil, err
			}
			return &unstructured.Unstructured{Object: m}, nil
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(desired.GroupVersionKind())
	if err := a.client.Get(ctx, client.ObjectKeyFromObject(desired), u); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return u, nil
}

func hasContent(u *unstructured.Unstructured) bool {
	for k := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			return true
		}
	}
	return false
}

// ownEntry returns manager's Apply entry for the main resource (not a subresource), nil when there
// is none. An entry without its field set (stripped by a cache) makes inPlace answer false.
func ownEntry(u *unstructured.Unstructured, manager string) *metav1.ManagedFieldsEntry {
	for _, e := range u.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return &e
		}
	}
	return nil
}

// ReducedManagedFields is the manager name of the stub entry KeepOwnManagedFields adds.
const ReducedManagedFields = "(others, reduced by the operator's cache)"

// KeepOwnManagedFields returns a cache transform that keeps only the given managers' Apply entries
// of managedFields and the Update entries their creates left (create.go; in full; none of a
// metadata-only object) plus one stub entry without a field set. The stub tells the applier
// that the cache reduced managedFields (rather than stripped them, which makes it read the object),
// so that the bulk of managedFields is never held in memory and the applier needs no read to
// decide; it also makes the reduced list undecodable for the API server (see below).
func KeepOwnManagedFields(managers ...string) func(any) (any, error) {
	ours := map[string]bool{}
	for _, m := range managers {
		ours[m] = true
	}
	return func(in any) (any, error) {
		obj, ok := in.(metav1.Object)
		if !ok {
			return in, nil
		}
		entries := obj.GetManagedFields()
		if len(entries) == 0 {
			return in, nil
		}
		var kept []metav1.ManagedFieldsEntry
		// A metadata-only object is read in full before a decision anyway: keep nothing of it.
		if _, metaOnly := in.(*metav1.PartialObjectMetadata); !metaOnly {
			for _, e := range entries {
				if e.Subresource == "" && (ours[e.Manager] && e.Operation == metav1.ManagedFieldsOperationApply ||
					e.Operation == metav1.ManagedFieldsOperationUpdate && ours[createOwner(e.Manager)]) {
					kept = append(kept, e)
				}
			}
		}
		// The stub has no fieldsType, so the API server cannot decode this list: should a cached
		// object ever be sent back with an update, the server keeps the stored managedFields
		// instead of replacing them with this reduced list.
		kept = append(kept, metav1.ManagedFieldsEntry{Manager: ReducedManagedFields, Operation: metav1.ManagedFieldsOperationUpdate})
		obj.SetManagedFields(kept)
		return in, nil
	}
}

// Contains reports whether every field of want is present in have with the same value: maps are
// compared as subsets (have may hold more keys, e.g. server defaults), lists element by element
// (same length; each element of want contained in the element of have at the same index), scalars
// by value (numbers numerically). Absent and empty (nil, {}, []) values of want match anything.
// Top-level apiVersion and kind are not compared (typed cache objects do not carry them).
func Contains(have, want map[string]any) bool {
	for k, w := range want {
		if k == "apiVersion" || k == "kind" || k == "status" {
			continue
		}
		if !contains(have[k], w) {
			return false
		}
	}
	return true
}

func contains(have, want any) bool {
	switch w := want.(type) {
	case nil:
		return true
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, wv := range w {
			if !contains(h[k], wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return scalarEqual(have, want)
	}
}

func scalarEqual(a, b any) bool {
	fa, aNum := number(a)
	fb, bNum := number(b)
	if aNum || bNum {
		return aNum && bNum && fa == fb
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// Fields the API server never records in managedFields.
var unrecorded = map[string]bool{"apiVersion": true, "kind": true, "status": true}
var unrecordedMeta = map[string]bool{"name": true, "namespace": true, "creationTimestamp": true, "resourceVersion": true,
	"uid": true, "generation": true, "managedFields": true, "selfLink": true}

// OwnsExactly reports whether owned, a managedFields field set (FieldsV1 as JSON: "f:<field>",
// "k:<key of a list element>", "v:<value of a set element>", "." for the element itself), names
// exactly the fields of desired: every field desired sets is in owned, and every field of owned
// is still set by desired. It needs no schema: list elements are matched to "k:" keys by the key
// fields they carry (a key field the element omits, such as a defaulted protocol, matches any).
func OwnsExactly(owned map[string]any, desired map[string]any) bool {
	return coversMap(owned, desired, true) && mapHasAll(desired, owned)
}

// coversMap: every (non-empty) field of d is in the owned set o.
func coversMap(o map[string]any, d map[string]any, top bool) bool {
	for k, v := range d {
		if top && unrecorded[k] {
			continue
		}
		if v == nil || isEmpty(v) {
			continue
		}
		if k == "metadata" && top {
			md, _ := v.(map[string]any)
			om, _ := o["f:metadata"].(map[string]any)
			rest := map[string]any{}
			for mk, mv := range md {
				if !unrecordedMeta[mk] {
					rest[mk] = mv
				}
			}
			if len(rest) == 0 {
				continue
			}
			if om == nil || !coversMap(om, rest, false) {
				return false
			}
			continue
		}
		sub, ok := o["f:"+k].(map[string]any)
		if !ok || !coversValue(sub, v) {
			return false
		}
	}
	return true
}

func coversValue(o map[string]any, v any) bool {
	switch d := v.(type) {
	case map[string]any:
		if len(o) == 0 {
			return true // owned as a whole (an atomic map)
		}
		return coversMap(o, d, false)
	case []any:
		if len(o) == 0 {
			return true // an atomic list, owned as a whole
		}
		for _, el := range d {
			if em, ok := el.(map[string]any); ok {
				sub, found := elementEntry(o, em)
				if !found || !coversValue(sub, em) {
					return false
				}
				continue
			}
			if _, found := setEntry(o, el); !found {
				return false
			}
		}
		return true
	default:
		return true
	}
}

// elementEntry finds the "k:" entry of o whose key fields el matches.
func elementEntry(o map[string]any, el map[string]any) (map[string]any, bool) {
	for k, sub := range o {
		if !strings.HasPrefix(k, "k:") {
			continue
		}
		keyFields := map[string]any{}
		if err := json.Unmarshal([]byte(k[2:]), &keyFields); err != nil {
			continue
		}
		if keyMatches(keyFields, el) {
			m, _ := sub.(map[string]any)
			return m, true
		}
	}
	return nil, false
}

func keyMatches(key, el map[string]any) bool {
	for f, kv := range key {
		ev, ok := el[f]
		if !ok {
			continue // omitted key field: the server filled in its default
		}
		if !scalarEqual(normalize(ev), normalize(kv)) {
			return false
		}
	}
	return true
}

// normalize makes JSON-decoded numbers and Go integers comparable.
func normalize(v any) any {
	if f, ok := number(v); ok {
		return f
	}
	return v
}

func setEntry(o map[string]any, el any) (map[string]any, bool) {
	for k, sub := range o {
		if !strings.HasPrefix(k, "v:") {
			continue
		}
		var val any
		if err := json.Unmarshal([]byte(k[2:]), &val); err != nil {
			continue
		}
		if scalarEqual(normalize(val), normalize(el)) {
			m, _ := sub.(map[string]any)
			return m, true
		}
	}
	return nil, false
}

// mapHasAll: every field of the owned set o is still set in d.
func mapHasAll(d map[string]any, o map[string]any) bool {
	for k, sub := range o {
		if k == "." {
			continue
		}
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			return false // element keys belong under lists
		}
		v, present := d[name]
		if !present || v == nil {
			return false
		}
		om, _ := sub.(map[string]any)
		if !valueHasAll(v, om) {
			return false
		}
	}
	return true
}

func valueHasAll(v any, o map[string]any) bool {
	if len(o) == 0 {
		return true
	}
	switch d := v.(type) {
	case map[string]any:
		return mapHasAll(d, o)
	case []any:
		for k, sub := range o {
			if k == "." {
				continue
			}
			sm, _ := sub.(map[string]any)
			switch {
			case strings.HasPrefix(k, "k:"):
				el, found := listElement(d, k[2:])
				if !found || !valueHasAll(el, sm) {
					return false
				}
			case strings.HasPrefix(k, "v:"):
				if !listHasValue(d, k[2:]) {
					return false
				}
			default:
				return false
			}
		}
		return true
	default:
		return false // owned sub-fields under a scalar: the shape changed
	}
}

func listElement(list []any, keyJSON string) (map[string]any, bool) {
	key := map[string]any{}
	if err := json.Unmarshal([]byte(keyJSON), &key); err != nil {
		return nil, false
	}
	for _, el := range list {
		if em, ok := el.(map[string]any); ok && keyMatches(key, em) {
			return em, true
		}
	}
	return nil, false
}

func listHasValue(list []any, valJSON string) bool {
	var val any
	if err := json.Unmarshal([]byte(valJSON), &val); err != nil {
		return false
	}
	for _, el := range list {
		if scalarEqual(normalize(el), normalize(val)) {
			return true
		}
	}
	return false
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// createOwner returns the owner whose create left an entry under manager (create.go), "" when
// manager is not a create's.
func createOwner(manager string) string {
	i := strings.LastIndex(manager, createManagerInfix)
	if i <= 0 || len(manager)-i-len(createManagerInfix) != createHashLen {
		return ""
	}
	return manager[:i]
}
