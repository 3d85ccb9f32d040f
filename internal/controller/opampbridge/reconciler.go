// Package opampbridge reconciles OpAMPBridge resources: it builds the bridge's objects with the pure
// builders of internal/manifests/opampbridge, applies them with the one generic applier, prunes
// objects it generated earlier and no longer wants (e.g. the ServiceAccount once spec.serviceAccount
// names another one), and writes status.version only when it changed. A reconcile that finds
// nothing to do sends no write request and emits no Event.
package opampbridge

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/apply"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
)

// FieldOwner is the server-side apply field manager of everything the operator writes (the same
// as the collector controller's).
const FieldOwner = "opentelemetry-operator"

// Reconciler reconciles OpAMPBridges. Build it with New or let SetupWithManager do it.
type Reconciler struct {
	// Client reads from the manager's (label-filtered) cache and writes to the API server.
	Client client.Client
	// Applier writes desired objects.
	Applier *apply.Applier
	// Recorder emits Events, only when something changed.
	Recorder events.EventRecorder
	// Manifests are the builders' operator-wide options (default image, filters, gates).
	Manifests mbridge.Options
	// Version is the bridge version of Manifests.Image, reported in status.version of bridges that
	// run the default image.
	Version string
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	bridge := &v1alpha1.OpAMPBridge{}
	if err := r.Client.Get(ctx, req.NamespacedName, bridge); err != nil {
		if apierrors.IsNotFound(err) {
			// Owned objects go with their owner (garbage collection); forget what we applied.
			r.Applier.Forget(req.Namespace, mbridge.Name(req.Name))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !bridge.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	desired, err := mbridge.Build(*bridge, r.Manifests)
	if err != nil {
		// Only the operator's own options can make the build fail; retrying will not help.
		r.Recorder.Eventf(bridge, nil, "Warning", "InvalidSpec", "Build", "%s", truncate(err.Error(), 1000))
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	for _, obj := range desired {
		setOwner(obj, bridge)
	}
	existing, err := r.listOwned(ctx, bridge)
	if err != nil {
		return ctrl.Result{}, err
	}
	changes, applyErr := r.Applier.ApplyAll(ctx, desired, existing)
	if applyErr == nil {
		pruned, err := r.Applier.DeleteAll(ctx, apply.Stale(desired, existing))
		changes = append(changes, pruned...)
		applyErr = err
	}
	if len(changes.Changed()) > 0 {
		log.Info("applied", "changes", changes.String())
		r.Recorder.Eventf(bridge, nil, "Normal", "Applied", "Apply", "%s", truncate(changes.String(), 1000))
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return ctrl.Result{}, r.updateStatus(ctx, bridge, computeStatus(bridge, r.Version))
}

// computeStatus sets status.version to the operator's bridge version when the bridge runs the
// default image; with spec.image nobody knows the version, so the stored value stays (upstream's
// rule).
func computeStatus(bridge *v1alpha1.OpAMPBridge, version string) v1alpha1.OpAMPBridgeStatus {
	st := bridge.Status
	if bridge.Spec.Image == "" && version != "" {
		st.Version = version
	}
	return st
}

// updateStatus writes st only when it differs from the stored status.
func (r *Reconciler) updateStatus(ctx context.Context, bridge *v1alpha1.OpAMPBridge, st v1alpha1.OpAMPBridgeStatus) error {
	if equality.Semantic.DeepEqual(st, bridge.Status) {
		return nil
	}
	patch := client.MergeFrom(bridge.DeepCopy())
	bridge.Status = st
	if err := r.Client.Status().Patch(ctx, bridge, patch); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// setOwner makes bridge the controller owner of obj.
func setOwner(obj client.Object, bridge *v1alpha1.OpAMPBridge) {
	t := true
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion:         v1alpha1.GroupVersion.String(),
		Kind:               "OpAMPBridge",
		Name:               bridge.Name,
		UID:                bridge.UID,
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
