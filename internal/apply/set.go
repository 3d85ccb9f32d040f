package apply

import (
	"context"
	"errors"
	"sort"
	"sync"

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

// ApplyStages applies desired, which must be sorted by stage, in stages: the objects of one stage
// (consecutive objects for which stage returns the same value) do not depend on each other and are
// applied concurrently, at most a.Parallel at a time; a stage starts only when every object of the
// one before it was applied. When an object of a stage fails, the rest of that stage is still
// applied, later stages are not, and the errors are returned joined. The changes are in desired's
// order (the failed objects left out). With a.Parallel <= 1 it is ApplyAll.
func (a *Applier) ApplyStages(ctx context.Context, desired []client.Object, existing Objects, stage func(client.Object) int) (ChangeSet, error) {
	if a.Parallel <= 1 {
		return a.ApplyAll(ctx, desired, existing)
	}
	var changes ChangeSet
	for start := 0; start < len(desired); {
		end := start + 1
		for end < len(desired) && stage(desired[end]) == stage(desired[start]) {
			end++
		}
		chs, err := a.applyConcurrently(ctx, desired[start:end], existing)
		changes = append(changes, chs...)
		if err != nil {
			return changes, err
		}
		start = end
	}
	return changes, nil
}

// applyConcurrently applies objs, at most a.Parallel at a time, and returns the changes of those
// that succeeded (in objs' order) and every error.
func (a *Applier) applyConcurrently(ctx context.Context, objs []client.Object, existing Objects) (ChangeSet, error) {
	if len(objs) == 1 {
		ch, err := a.Apply(ctx, objs[0], existing[KeyOf(objs[0])])
		if err != nil {
			return nil, err
		}
		return ChangeSet{ch}, nil
	}
	chs := make([]Change, len(objs))
	errs := make([]error, len(objs))
	sem := make(chan struct{}, a.Parallel)
	var wg sync.WaitGroup
	for i, obj := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			chs[i], errs[i] = a.Apply(ctx, obj, existing[KeyOf(obj)])
		}()
	}
	wg.Wait()
	var out ChangeSet
	for i := range objs {
		if errs[i] == nil {
			out = append(out, chs[i])
		}
	}
	return out, errors.Join(errs...)
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
