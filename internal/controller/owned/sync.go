package owned

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/internal/apply"
)

// Syncer is the reconcile skeleton of a controller whose custom resource owns the objects a pure
// builder generates (OpAMPBridge, TargetAllocator): Load, then the caller builds, then Sync
// (apply, prune, Event on change), then PatchStatus (only when the status differs). It holds no
// state of its own; a reconcile that changes nothing sends no write request and emits no Event.
type Syncer struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Applier writes desired objects.
	Applier *apply.Applier
	// Recorder emits Events, only when something changed or the build failed.
	Recorder events.EventRecorder
	// Owner is the custom resource's kind and API version, written into owner references and used
	// to recognise owned objects.
	Owner schema.GroupVersionKind
}

// Load gets the resource req names into obj. It reports found=false, and no error, when the
// resource is gone (the applier then forgets what it applied under the generated name prefix:
// owned objects go with their owner by garbage collection) or is being deleted.
func (s Syncer) Load(ctx context.Context, req ctrl.Request, obj client.Object, generatedPrefix string) (bool, error) {
	if err := s.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			s.Applier.Forget(req.Namespace, generatedPrefix)
			return false, nil
		}
		return false, err
	}
	return obj.GetDeletionTimestamp().IsZero(), nil
}

// BuildFailed reports a build error on owner with a Warning Event (reason InvalidSpec) and returns
// it as a terminal error: retrying will not help, a change of the inputs brings a new reconcile.
func (s Syncer) BuildFailed(owner client.Object, err error) error {
	s.Recorder.Eventf(owner, nil, "Warning", "InvalidSpec", "Build", "%s", truncate(err.Error(), 1000))
	return reconcile.TerminalError(err)
}

// Sync makes owner the controller of every desired object, applies them, then deletes the objects
// of kinds that owner controls and no longer desires (only after every apply succeeded). When
// something changed it logs the changes and emits a Normal Event (reason Applied).
func (s Syncer) Sync(ctx context.Context, owner client.Object, desired []client.Object, kinds []schema.GroupVersionKind) error {
	for _, obj := range desired {
		s.setOwner(obj, owner)
	}
	existing, err := List(ctx, s.Client, owner, s.Owner.Kind, kinds)
	if err != nil {
		return err
	}
	changes, applyErr := s.Applier.ApplyAll(ctx, desired, existing)
	if applyErr == nil {
		pruned, err := s.Applier.DeleteAll(ctx, apply.Stale(desired, existing))
		changes = append(changes, pruned...)
		applyErr = err
	}
	if len(changes.Changed()) > 0 {
		ctrl.LoggerFrom(ctx).Info("applied", "changes", changes.String())
		s.Recorder.Eventf(owner, nil, "Normal", "Applied", "Apply", "%s", truncate(changes.String(), 1000))
	}
	var taken *apply.OwnershipError
	if errors.As(applyErr, &taken) {
		// Someone else's object under a generated name: not taken over. Retried with backoff (a
		// read each time, see apply.Applier.CreateMissing), so the user's fix is picked up.
		s.Recorder.Eventf(owner, nil, "Warning", ReasonOwnershipConflict, "Apply", "%s", truncate(taken.Error(), 1000))
	}
	return applyErr
}

// ReasonOwnershipConflict is the reason of the Warning Event Sync emits when a desired object
// exists and belongs to someone else (the collector's condition reason of the same case).
const ReasonOwnershipConflict = "OwnershipConflict"

// PatchStatus sets *status (a field of obj) to want and merge-patches obj's status subresource,
// but only when want differs from the stored status.
func PatchStatus[S any](ctx context.Context, c client.Client, obj client.Object, status *S, want S) error {
	if equality.Semantic.DeepEqual(want, *status) {
		return nil
	}
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("updating status: %T does not copy to a client.Object", obj)
	}
	*status = want
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// setOwner makes owner the controller owner of obj (and the only owner reference).
func (s Syncer) setOwner(obj, owner client.Object) {
	t := true
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion:         s.Owner.GroupVersion().String(),
		Kind:               s.Owner.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
