// Package apply is the operator's one generic applier. It writes desired objects with server-side
// apply under a single field owner, skips objects whose desired state is already in place (no
// write request at all: remembered from its own last apply to the same live resourceVersion, or
// decided from the live object's content and managedFields, which survives restarts), recreates
// objects whose immutable fields changed, and prunes objects the caller says we own and no longer
// want.
//
// The applier never decides ownership itself: callers pass the live objects they own (by owner
// reference or by their own labels), so nothing a user created is ever pruned.
package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Action is what the applier did to one object.
type Action string

// The actions, as they appear in Events and logs.
const (
	Unchanged  Action = "unchanged"
	Created    Action = "created"
	Configured Action = "configured"
	Recreated  Action = "recreated"
	Deleted    Action = "deleted"
)

// Change records the action taken on one object.
type Change struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Action    Action
	// Live is the object as the API server returned it during this apply (the apply's response,
	// or the read that caught a stale cache up), newer than the live object the caller passed;
	// nil when the caller's live object stood. A caller that reports on the object's status (a
	// workload's rollout) must read it from here when it is set.
	Live client.Object
}

// String renders "Kind/name action".
func (c Change) String() string { return fmt.Sprintf("%s/%s %s", c.GVK.Kind, c.Name, c.Action) }

// ChangeSet is the list of changes of one apply or prune.
type ChangeSet []Change

// Changed returns the entries whose action is not Unchanged.
func (cs ChangeSet) Changed() ChangeSet {
	var out ChangeSet
	for _, c := range cs {
		if c.Action != Unchanged {
			out = append(out, c)
		}
	}
	return out
}

// String joins the changed entries with ", ".
func (cs ChangeSet) String() string {
	var parts []string
	for _, c := range cs.Changed() {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ", ")
}

// key identifies an object across kinds.
type key struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

// record is what the applier remembers of its last successful apply of an object.
type record struct {
	hash            string
	resourceVersion string
}

// Applier applies desired objects with server-side apply. It is safe for concurrent use.
type Applier struct {
	// RecreateWait bounds how long a recreate waits for the old object to be deleted (orphaning
	// its dependents is the garbage collector's work) before it reports ErrRecreatePending.
	RecreateWait time.Duration
	// CreateMissing creates an object the caller's cache does not hold with a plain create instead
	// of a server-side apply: cheaper for the API server, and an object someone else made under the
	// same name makes the create fail instead of being taken over (see create.go).
	CreateMissing bool
	// Adoptable decides, with CreateMissing, whether an object that exists under a desired
	// object's name (created by someone, or not yet in the caller's cache) may be taken over
	// (default SameOwner); when it may not, Apply returns an *OwnershipError.
	Adoptable func(desired, live client.Object) bool
	// Parallel bounds how many independent objects ApplyStages writes at once (<= 1: one after
	// the other). Writes wait on the API server, not on this process: a reconcile that sends its
	// independent writes together takes one round trip per stage instead of one per object.
	Parallel int

	client client.Client
	owner  string

	mu      sync.Mutex
	applied map[key]record
	// refused holds the objects createMissing found to be someone else's (read, not created, until
	// they are gone or adoptable).
	refused map[key]bool
}

// DefaultParallel is New's Parallel.
const DefaultParallel = 4

// New returns an Applier that writes through c as field manager owner.
func New(c client.Client, owner string) *Applier {
	return &Applier{client: c, owner: owner, applied: map[key]record{}, refused: map[key]bool{}, RecreateWait: 3 * time.Second, Parallel: DefaultParallel}
}

// Apply makes the object exist as desired. live is the object as the caller's cache sees it, or
// nil when it does not exist. When the same desired state was already applied and live still has
// the resourceVersion that apply returned, Apply sends no request and reports Unchanged. Otherwise
// it checks whether the desired state is in place in live (see inPlace; a metadata-only live
// object, or one without managedFields, is read in full from the API server first) and sends
// the apply only when it is not.
func (a *Applier) Apply(ctx context.Context, desired client.Object, live client.Object) (Change, error) {
	u, err := ToUnstructured(desired)
	if err != nil {
		return Change{}, err
	}
	k := key{gvk: u.GroupVersionKind(), namespace: u.GetNamespace(), name: u.GetName()}
	ch := Change{GVK: k.gvk, Namespace: k.namespace, Name: k.name}
	hash, err := hashOf(u)
	if err != nil {
		return ch, err
	}
	caught, read, err := a.catchUp(ctx, k, hash, live)
	if err != nil {
		return ch, err
	}
	if read {
		live = caught
		if caught != nil {
			ch.Live = caught
		}
	}
	if live == nil && a.CreateMissing {
		created, existing, err := a.createMissing(ctx, k, u, hash)
		if err != nil {
			return ch, err
		}
		if created != nil {
			a.remember(k, hash, created.GetResourceVersion())
			ch.Action, ch.Live = Created, created
			return ch, nil
		}
		live = existing
		ch.Live = existing
	}
	if live != nil {
		if a.upToDate(k, hash, live.GetResourceVersion()) {
			ch.Action = Unchanged
			return ch, nil
		}
		// Not applied by this process to this version (a restart, a change by someone else, an
		// object another tool made): decide from the live object whether anything must be sent.
		v, err := a.inPlace(ctx, u, hash, live)
		if err != nil {
			return ch, err
		}
		if v.inPlace {
			a.remember(k, hash, v.resourceVersion)
			ch.Action = Unchanged
			return ch, nil
		}
		// Created by this applier (create.go): its create entry becomes our Apply entry first, so
		// that the apply removes what the desired state dropped since.
		if v.created {
			if err := a.upgradeCreateEntries(ctx, u); err != nil {
				return ch, err
			}
		}
	}
	before := ""
	if live != nil {
		before = live.GetResourceVersion()
	}
	applied := u.DeepCopy()
	err = a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner(a.owner), client.ForceOwnership)
	switch {
	case err == nil:
		ch.Action = Configured
		if live == nil {
			ch.Action = Created
		} else if applied.GetResourceVersion() == before {
			ch.Action = Unchanged
		}
	case IsImmutableFieldError(err):
		if applied, err = a.recreate(ctx, u); err != nil {
			return ch, err
		}
		ch.Action = Recreated
	default:
		return ch, fmt.Errorf("applying %s %s/%s: %w", k.gvk.Kind, k.namespace, k.name, err)
	}
	a.remember(k, hash, applied.GetResourceVersion())
	ch.Live = applied
	return ch, nil
}

// recreate deletes the object (the version that exists now) and applies it again. It is used when
// an immutable field changed, e.g. a Deployment's selector or a StatefulSet's volumeClaimTemplates.
//
// It replaces only what the desired object's owner owns (SameOwner): a same-named object that
// someone else created is never deleted. A workload whose selector is unchanged (a StatefulSet's
// volumeClaimTemplates or serviceName changed) is deleted with orphan propagation, so its pods keep
// running and the recreated workload adopts them and rolls them as usual, instead of taking every
// pod down at once. Orphaning is finished by the garbage collector; recreate waits up to
// RecreateWait for the old object to be gone and otherwise returns an ErrRecreatePending error (the
// caller retries; the next attempt finds the object gone or still terminating).
func (a *Applier) recreate(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(u.GroupVersionKind())
	err := a.client.Get(ctx, client.ObjectKeyFromObject(u), current)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("recreating %s %s: %w", u.GetKind(), u.GetName(), err)
	case !SameOwner(u, current):
		return nil, fmt.Errorf("%s %s/%s has an immutable field that differs from what the operator generates, and the existing object "+
			"was not created for this owner; the operator does not replace it (rename or delete it)", u.GetKind(), u.GetNamespace(), u.GetName())
	case current.GetDeletionTimestamp() == nil:
		policy := metav1.DeletePropagationBackground
		if orphanDependents(u, current) {
			policy = metav1.DeletePropagationOrphan
		}
		if err := a.deleteWith(ctx, u.GroupVersionKind(), u.GetNamespace(), u.GetName(), current.GetUID(), policy); err != nil {
			return nil, err
		}
		fallthrough
	default:
		if err := a.waitGone(ctx, u); err != nil {
			return nil, err
		}
	}
	applied := u.DeepCopy()
	if err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner(a.owner), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("recreating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return applied, nil
}

// ErrRecreatePending says an object being recreated is still terminating (its dependents are being
// orphaned); retry later.
var ErrRecreatePending = errors.New("the old object is still being deleted")

// waitGone polls until u no longer exists, up to a.RecreateWait.
func (a *Applier) waitGone(ctx context.Context, u *unstructured.Unstructured) error {
	deadline := time.Now().Add(a.RecreateWait)
	for {
		cur := &metav1.PartialObjectMetadata{}
		cur.SetGroupVersionKind(u.GroupVersionKind())
		err := a.client.Get(ctx, client.ObjectKeyFromObject(u), cur)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("recreating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("recreating %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), ErrRecreatePending)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// orphanDependents reports whether replacing current with desired should keep current's dependents:
// for apps workloads whose selector does not change, so that the new workload adopts the pods (or
// ReplicaSets). With a new selector nothing could adopt them, so they go with the old workload.
func orphanDependents(desired, current *unstructured.Unstructured) bool {
	gvk := desired.GroupVersionKind()
	if gvk.Group != "apps" {
		return false
	}
	want, ok1, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "selector")
	have, ok2, _ := unstructured.NestedFieldNoCopy(current.Object, "spec", "selector")
	return ok1 && ok2 && equality.Semantic.DeepEqual(want, have)
}

// Delete removes one object we own, only if it still has uid (a precondition, so an object someone
// recreated under the same name is left alone). A missing object is not an error.
func (a *Applier) Delete(ctx context.Context, obj client.Object) (Change, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	ch := Change{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Action: Deleted}
	if gvk.Kind == "" {
		return ch, fmt.Errorf("delete %s/%s: object has no kind", obj.GetNamespace(), obj.GetName())
	}
	err := a.delete(ctx, gvk, obj.GetNamespace(), obj.GetName(), obj.GetUID())
	return ch, err
}

func (a *Applier) delete(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, uid types.UID) error {
	return a.deleteWith(ctx, gvk, ns, name, uid, metav1.DeletePropagationBackground)
}

func (a *Applier) deleteWith(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, uid types.UID, policy metav1.DeletionPropagation) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	opts := []client.DeleteOption{client.PropagationPolicy(policy)}
	if uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err := a.client.Delete(ctx, u, opts...)
	a.forget(key{gvk: gvk, namespace: ns, name: name})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, ns, name, err)
	}
	return nil
}

func (a *Applier) upToDate(k key, hash, rv string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.applied[k]
	return ok && r.hash == hash && r.resourceVersion == rv
}

// catchUp handles a cache that has not yet seen the applier's own last write of this desired
// state (live missing, or older than that write: a second reconcile that follows the first one
// closely, before the watch event of its create arrived). The object is then read from the API
// server, a read instead of a second write of the same state; the watch event that brings the
// cache up to date triggers a reconcile of its own. read says whether the object was read; the
// object read is nil when it no longer exists.
func (a *Applier) catchUp(ctx context.Context, k key, hash string, live client.Object) (obj client.Object, read bool, err error) {
	a.mu.Lock()
	r, ok := a.applied[k]
	a.mu.Unlock()
	if !ok || r.hash != hash || (live != nil && !olderThan(live.GetResourceVersion(), r.resourceVersion)) {
		return live, false, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	if err := a.client.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: k.name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, true, nil
		}
		return nil, true, fmt.Errorf("reading %s %s/%s: %w", k.gvk.Kind, k.namespace, k.name, err)
	}
	return u, true, nil
}

// olderThan reports whether resourceVersion rv is older than written. Resource versions are
// compared as the integers the API server issues; when either is not one, rv counts as older
// (the caller then reads the object, which is always safe).
func olderThan(rv, written string) bool {
	a, errA := strconv.ParseUint(rv, 10, 64)
	b, errB := strconv.ParseUint(written, 10, 64)
	if errA != nil || errB != nil {
		return rv != written
	}
	return a < b
}

func (a *Applier) remember(k key, hash, rv string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied[k] = record{hash: hash, resourceVersion: rv}
}

func (a *Applier) forget(k key) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.applied, k)
}

// Forget drops what the applier remembers of objects in namespace ns whose name has prefix (used
// when their owner is deleted, so memory stays bounded by what exists).
func (a *Applier) Forget(ns, prefix string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.applied {
		if k.namespace == ns && strings.HasPrefix(k.name, prefix) {
			delete(a.applied, k)
		}
	}
}

func hashOf(u *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// IsImmutableFieldError reports whether err is the API server refusing a change to a field that
// cannot change after creation.
func IsImmutableFieldError(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "field is immutable") ||
		strings.Contains(msg, "updates to statefulset spec for fields other than") ||
		strings.Contains(msg, "may not change once set")
}
