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
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/controller/owned"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
)

// FieldOwner is the server-side apply field manager of everything the operator writes (the same
// as the other controllers').
const FieldOwner = "opentelemetry-operator"

// Reconciler reconciles TargetAllocators. Build it with SetupWithManager.
type Reconciler struct {
	// Syncer loads the target allocator, applies and prunes its objects and patches its status.
	// Its client reads collectors and TargetAllocators unfiltered, owned objects by our label.
	owned.Syncer
	// Manifests are the builders' operator-wide options (default image, filters, gates).
	Manifests mta.Options
	// Capabilities reports the optional APIs the cluster serves now; nil means none.
	Capabilities func() autodetect.Capabilities
	// Version is the target allocator version of Manifests.Image, reported in status.version of
	// target allocators that run the default image.
	Version string
	// certs issues and renews the mutual TLS certificates (mta.MTLSEnabled).
	certs issuer
}

// Reconcile implements reconcile.Reconciler: load -> find the collector -> build -> apply and
// prune -> status if changed. With mutual TLS the certificate Secrets are issued (or kept) first
// and applied with the other objects; the reconcile comes back when one is due for renewal.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ta := &v1alpha1.TargetAllocator{}
	if found, err := r.Load(ctx, req, ta, mta.Name(req.Name)); !found || err != nil {
		return ctrl.Result{}, err
	}
	if ta.Spec.ManagementState == v1beta1.ManagementStateUnmanaged {
		return ctrl.Result{}, nil
	}
	collector, err := r.findCollector(ctx, ta)
	if errors.Is(err, errOwnerMissing) {
		// The collector watch brings the target allocator back once its owner is cached; if the
		// owner is gone for good, garbage collection removes the target allocator.
		ctrl.LoggerFrom(ctx).V(1).Info("waiting for the owning collector")
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	opts := r.Manifests
	opts.PrometheusCRDs = r.Capabilities != nil && r.Capabilities().Prometheus
	desired, err := mta.Build(*ta, collector, opts)
	if err != nil {
		// The spec or the collector's config is invalid; a change to either triggers a new reconcile.
		return ctrl.Result{}, r.BuildFailed(ta, err)
	}
	var result ctrl.Result
	if mta.MTLSEnabled(ta.Spec.Mtls, ta.Spec.PrometheusCR.Enabled, opts.MTLS) {
		material, renewAt, err := r.certs.material(ctx, ta)
		if err != nil {
			return ctrl.Result{}, err
		}
		secrets, err := mta.CertificateSecrets(*ta, material, opts)
		if err != nil {
			return ctrl.Result{}, r.BuildFailed(ta, err)
		}
		desired = append(secretObjects(secrets), desired...)
		if !renewAt.IsZero() {
			// Come back when a certificate is due for renewal (a third of its validity left).
			result.RequeueAfter = max(renewAt.Sub(r.certs.now()), time.Second)
		}
	}
	if err := r.Sync(ctx, ta, desired, ownedKinds(opts.PrometheusCRDs, opts.MTLS)); err != nil {
		return ctrl.Result{}, err
	}
	return result, owned.PatchStatus(ctx, r.Client, ta, &ta.Status, computeStatus(ta, mta.Image(*ta, r.Manifests), r.Version))
}

func secretObjects(secrets []*corev1.Secret) []client.Object {
	out := make([]client.Object, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, s)
	}
	return out
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
