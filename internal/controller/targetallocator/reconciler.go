// Package targetallocator reconciles TargetAllocator resources: it finds the collector that uses
// the target allocator (owner reference or the opentelemetry.io/target-allocator label), builds
// the objects with the pure builders of internal/manifests/targetallocator, applies them with the
// one generic applier, prunes objects it generated earlier and no longer wants, and writes
// status.version and status.image only when they changed. A reconcile that finds nothing to do
// sends no write request and emits no Event; a resource with managementState unmanaged is left
// alone.
package targetallocator

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// FieldOwner is the server-side apply field manager of everything the operator writes (the same
// as the other controllers').
const FieldOwner = "opentelemetry-operator"

// Reconciler reconciles TargetAllocators. Build it with SetupWithManager.
type Reconciler struct {
	// Client reads from the manager's cache (collectors and TargetAllocators unfiltered, owned
	// objects by our label) and writes to the API server.
	Client client.Client
	// Applier writes desired objects.
	Applier *apply.Applier
	// Recorder emits Events, only when something changed.
	Recorder events.EventRecorder
	// Manifests are the builders' operator-wide options (default image, filters, gates).
	Manifests mta.Options
	// Capabilities reports the optional APIs the cluster serves now; nil means none.
	Capabilities func() autodetect.Capabilities
	// Version is the target allocator version of Manifests.Image, reported in status.version of
	// target allocators that run the default image.
	Version string
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ta := &v1alpha1.TargetAllocator{}
	if err := r.Client.Get(ctx, req.NamespacedName, ta); err != nil {
		if apierrors.IsNotFound(err) {
			// Owned objects go with their owner (garbage collection); forget what we applied.
			r.Applier.Forget(req.Namespace, mta.Name(req.Name))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !ta.DeletionTimestamp.IsZero() || ta.Spec.ManagementState == v1beta1.ManagementStateUnmanaged {
		return ctrl.Result{}, nil
	}

	collector, err := r.findCollector(ctx, ta)
	if errors.Is(err, errOwnerMissing) {
		// The collector watch brings the target allocator back once its owner is cached; if the
		// owner is gone for good, garbage collection removes the target allocator.
		log.V(1).Info("waiting for the owning collector")
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	opts := r.Manifests
	prometheus := r.Capabilities != nil && r.Capabilities().Prometheus
	opts.PrometheusCRDs = prometheus
	desired, err := mta.Build(*ta, collector, opts)
	if err != nil {
		// The spec or the collector's config is invalid; a change to either triggers a new reconcile.
		r.Recorder.Eventf(ta, nil, "Warning", "InvalidSpec", "Build", "%s", truncate(err.Error(), 1000))
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	for _, obj := range desired {
		setOwner(obj, ta)
	}
	existing, err := r.listOwned(ctx, ta, prometheus)
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
		r.Recorder.Eventf(ta, nil, "Normal", "Applied", "Apply", "%s", truncate(changes.String(), 1000))
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return ctrl.Result{}, r.updateStatus(ctx, ta, computeStatus(ta, mta.Image(*ta, r.Manifests), r.Version))
}

// computeStatus sets status.image to the image deployed and status.version to the operator's
// target allocator version when the default image runs; with spec.image nobody knows the version,
// so the stored value stays (upstream's rule).
func computeStatus(ta *v1alpha1.TargetAllocator, image, version string) v1alpha1.TargetAllocatorStatus {
	st := ta.Status
	st.Image = image
	if ta.Spec.Image == "" && version != "" {
		st.Version = version
	}
	return st
}

// updateStatus writes st only when it differs from the stored status.
func (r *Reconciler) updateStatus(ctx context.Context, ta *v1alpha1.TargetAllocator, st v1alpha1.TargetAllocatorStatus) error {
	if equality.Semantic.DeepEqual(st, ta.Status) {
		return nil
	}
	patch := client.MergeFrom(ta.DeepCopy())
	ta.Status = st
	if err := r.Client.Status().Patch(ctx, ta, patch); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// setOwner makes ta the controller owner of obj.
func setOwner(obj client.Object, ta *v1alpha1.TargetAllocator) {
	t := true
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion:         v1alpha1.GroupVersion.String(),
		Kind:               "TargetAllocator",
		Name:               ta.Name,
		UID:                ta.UID,
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
