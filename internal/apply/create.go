package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Creating missing objects (Applier.CreateMissing).
//
// An object the caller's cache does not hold is created with a plain create instead of a
// server-side apply: the API server spends up to a third less CPU on a create (bench/apicost), and
// a create fails when the object exists, which checks that nobody else made an object under the
// same name without reading it first. Only an object that exists is read, and it is taken over
// only when Adoptable says it is the same owner's.
//
// A create records the created fields, and every field the API server defaulted, under an Update
// entry of managedFields, which a later server-side apply neither uses nor prunes. So the create
// is sent under a field manager of its own, "<owner>-create-<hash>", whose name carries the hash
// of the desired state it created (16 hex digits of the hash the applier already keeps). That
// entry says, in the object itself and across restarts, what was created:
//
//   - while the desired state still has that hash, the object is in place when every desired
//     field has its value (nothing can have been dropped since the create);
//   - once the desired state differs, the entry is converted into the owner's Apply entry
//     (client-go's csaupgrade: one read and one write, once per object) and the desired state is
//     applied: fields it no longer has are removed, defaulted ones are defaulted again, and from
//     then on the object is an applied one like any other.
//
// The manager name is in managedFields only, which the compatibility contract does not cover;
// labels, annotations and the rest of the object are exactly what an apply would have made.

// createManagerInfix joins the owner and the hash in the create's field manager name.
const createManagerInfix = "-create-"

// createHashLen is how many hex digits of the desired state's hash the manager name carries.
const createHashLen = 16

// createManager is the field manager of a create of the desired state with this hash.
func (a *Applier) createManager(hash string) string {
	if len(hash) > createHashLen {
		hash = hash[:createHashLen]
	}
	return a.owner + createManagerInfix + hash
}

// createEntries returns the names of the Update entries for the main resource that the applier's
// creates left in live's managedFields (normally at most one).
func (a *Applier) createEntries(live client.Object) []string {
	var names []string
	for _, e := range live.GetManagedFields() {
		if e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" && createOwner(e.Manager) == a.owner {
			names = append(names, e.Manager)
		}
	}
	return names
}

// OwnershipError is a desired object that exists and that Adoptable refused: someone else's.
type OwnershipError struct {
	Kind, Namespace, Name string
	// Owner describes who it belongs to (its controller, or its owner annotation).
	Owner string
}

func (e *OwnershipError) Error() string {
	return fmt.Sprintf("%s %q already exists and belongs to %s; the operator does not take it over "+
		"(rename the owner, or delete the other object if it is stale)", e.Kind, namespacedName(e.Namespace, e.Name), e.Owner)
}

// createMissing creates u under createManager(hash). When it exists already, it returns the
// object read, or an OwnershipError when Adoptable refuses it. An object refused once is read
// instead of created while it stays refused: a collector stalled on someone else's object costs
// a read per reconcile, as with no create at all, not a failed create.
func (a *Applier) createMissing(ctx context.Context, k key, u *unstructured.Unstructured, hash string) (created, existing *unstructured.Unstructured, err error) {
	if !a.wasRefused(k) {
		obj := u.DeepCopy()
		err = a.client.Create(ctx, obj, client.FieldOwner(a.createManager(hash)))
		if err == nil {
			return obj, nil, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("creating %s %s: %w", u.GetKind(), objectName(u), err)
		}
	}
	existing = &unstructured.Unstructured{}
	existing.SetGroupVersionKind(u.GroupVersionKind())
	err = a.client.Get(ctx, client.ObjectKeyFromObject(u), existing)
	if apierrors.IsNotFound(err) && a.wasRefused(k) {
		// The other object is gone: create ours.
		a.setRefused(k, false)
		return a.createMissing(ctx, k, u, hash)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s %s: %w", u.GetKind(), objectName(u), err)
	}
	adoptable := a.Adoptable
	if adoptable == nil {
		adoptable = SameOwner
	}
	if !adoptable(u, existing) {
		a.setRefused(k, true)
		return nil, nil, &OwnershipError{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Owner: describeOwner(existing)}
	}
	a.setRefused(k, false)
	return nil, existing, nil
}

func (a *Applier) wasRefused(k key) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused[k]
}

func (a *Applier) setRefused(k key, refused bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if refused {
		a.refused[k] = true
	} else {
		delete(a.refused, k)
	}
}

func objectName(o client.Object) string { return namespacedName(o.GetNamespace(), o.GetName()) }

// namespacedName is "<namespace>/<name>", or the name alone for a cluster-scoped object.
func namespacedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// describeOwner names who an object belongs to, for an OwnershipError.
func describeOwner(o client.Object) string {
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		return ref.Kind + " " + ref.Name
	}
	if owner := o.GetAnnotations()[OwnerAnnotation]; owner != "" {
		return owner
	}
	return "another owner (it has no controller reference and no " + OwnerAnnotation + " annotation)"
}

// upgradeCreateEntries converts the Update entries the applier's creates left in the object into
// the owner's Apply entry, so that the apply that follows prunes what the desired state no longer
// has. managedFields are read in full from the API server (a cache may have reduced them); the
// patch carries the read's resourceVersion, so it fails rather than overwrite entries another
// writer added since the read (a controller's status update, most often): it is then read and
// tried again, up to upgradeAttempts times.
func (a *Applier) upgradeCreateEntries(ctx context.Context, u *unstructured.Unstructured) error {
	var err error
	for range upgradeAttempts {
		if err = a.upgradeCreateEntriesOnce(ctx, u); !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("converting the managedFields of %s %s to server-side apply: %w", u.GetKind(), objectName(u), err)
	}
	return nil
}

// upgradeAttempts bounds upgradeCreateEntries' read-and-patch rounds.
const upgradeAttempts = 3

func (a *Applier) upgradeCreateEntriesOnce(ctx context.Context, u *unstructured.Unstructured) error {
	full := &unstructured.Unstructured{}
	full.SetGroupVersionKind(u.GroupVersionKind())
	if err := a.client.Get(ctx, client.ObjectKeyFromObject(u), full); err != nil {
		return client.IgnoreNotFound(err)
	}
	managers := a.createEntries(full)
	if len(managers) == 0 {
		return nil
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(full, sets.New(managers...), a.owner)
	if err != nil || patch == nil {
		return err
	}
	return a.client.Patch(ctx, full, client.RawPatch(types.JSONPatchType, patch))
}
