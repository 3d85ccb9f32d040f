package apply

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Key identifies an object by kind, namespace and name.
type Key struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// KeyOf returns obj's key; obj must carry its kind (builders set TypeMeta, listers set the GVK).
func KeyOf(obj client.Object) Key {
	return Key{GVK: obj.GetObjectKind().GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Objects are the live objects a controller owns, by key, as its cache sees them.
type Objects map[Key]client.Object

// ApplyAll applies desired in order, each against its live counterpart in existing, and stops at
// the first error.
func (a *Applier) ApplyAll(ctx context.Context, desired []client.Object, existing Objects) (ChangeSet, error) {
	var changes ChangeSet
	for _, obj := range desired {
		ch, err := a.Apply(ctx, obj, existing[KeyOf(obj)])
		if err != nil {
			return changes, err
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// Stale returns the objects of existing that desired does not contain, sorted by kind then name
// so that deletions happen in a stable order.
func Stale(desired []client.Object, existing Objects) []client.Object {
	want := make(map[Key]bool, len(desired))
	for _, d := range desired {
		want[KeyOf(d)] = true
	}
	var stale []client.Object
	for k, o := range existing {
		if !want[k] {
			stale = append(stale, o)
		}
	}
	sort.Slice(stale, func(i, j int) bool {
		ki, kj := KeyOf(stale[i]), KeyOf(stale[j])
		if ki.GVK.Kind != kj.GVK.Kind {
			return ki.GVK.Kind < kj.GVK.Kind
		}
		return ki.Name < kj.Name
	})
	return stale
}

// DeleteAll deletes objs in order, each with its UID as precondition, and stops at the first error.
func (a *Applier) DeleteAll(ctx context.Context, objs []client.Object) (ChangeSet, error) {
	var changes ChangeSet
	for _, o := range objs {
		ch, err := a.Delete(ctx, o)
		if err != nil {
			return changes, err
		}
		changes = append(changes, ch)
	}
	return changes, nil
}
