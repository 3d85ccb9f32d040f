// Package opampbridge reconciles OpAMPBridge resources: it builds the bridge's objects with the pure
// builders of internal/manifests/opampbridge, applies them with the one generic applier, prunes
// objects it generated earlier and no longer wants (e.g. the ServiceAccount once spec.serviceAccount
// names another one), and writes status.version only when it changed. A reconcile that finds
// nothing to do sends no write request and emits no Event.
package opampbridge

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/controller/owned"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
)

// FieldOwner is the server-side apply field manager of everything the operator writes (the same
// as the collector controller's).
const FieldOwner = "opentelemetry-operator"

// Reconciler reconciles OpAMPBridges. Build it with SetupWithManager.
type Reconciler struct {
	// Syncer loads the bridge, applies and prunes its objects and patches its status.
	owned.Syncer
	// Manifests are the builders' operator-wide options (default image, filters, gates).
	Manifests mbridge.Options
	// Version is the bridge version of Manifests.Image, reported in status.version of bridges that
	// run the default image.
	Version string
}

// Reconcile implements reconcile.Reconciler: load -> build -> apply and prune -> status if changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bridge := &v1alpha1.OpAMPBridge{}
	if found, err := r.Load(ctx, req, bridge, mbridge.Name(req.Name)); !found || err != nil {
		return ctrl.Result{}, err
	}
	desired, err := mbridge.Build(*bridge, r.Manifests)
	if err != nil {
		// Only the operator's own options can make the build fail; retrying will not help.
		return ctrl.Result{}, r.BuildFailed(bridge, err)
	}
	if err := r.Sync(ctx, bridge, desired, mbridge.Kinds); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, owned.PatchStatus(ctx, r.Client, bridge, &bridge.Status, computeStatus(bridge, r.Version))
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
