// Package collector reconciles OpenTelemetryCollector resources: it builds the desired objects with
// the pure builders, applies them with the one generic applier, prunes what is no longer wanted, and
// writes a truthful status (Ready only when the workload is available), only when it changed;
// while a rollout is in progress at most once per coalescing window (statuswrite).
package collector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/controller/statuswrite"
	"github.com/otelop/otelop/internal/upgrade"
)

// Finalizer guards the cleanup of cluster-scoped RBAC, which cannot carry an owner reference. It is
// only added to collectors whose configuration needs a ClusterRole.
const Finalizer = "opentelemetrycollector.opentelemetry.io/finalizer"

// FieldOwner is the server-side apply field manager of everything the controller writes.
const FieldOwner = "opentelemetry-operator"

// BuildFunc computes the desired objects of a collector. It must be pure: the operator wires it to
// the manifest builders with the current capabilities and flags. An error means the spec cannot be
// built (the collector is Stalled until its spec changes).
type BuildFunc func(otelcol *v1beta1.OpenTelemetryCollector, caps autodetect.Capabilities) ([]client.Object, error)

// Reconciler reconciles OpenTelemetryCollectors.
type Reconciler struct {
	// Client reads from the manager's (label-filtered) cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server, uncached (the manager's API reader): the collector's
	// pods, listed only while its workload is not available or rolling out, to report a container
	// that crash-loops or cannot start (nil disables that).
	APIReader client.Reader
	// Applier writes desired objects. It must create missing objects (CreateMissing, with
	// Adoptable as its Adoptable): that is how the controller refuses an object someone else made
	// under a generated name; SetupWithManager checks it.
	Applier *apply.Applier
	// Recorder emits Events: Applied when objects changed, and the Ready transitions a person
	// wants to hear of (readyEvent).
	Recorder events.EventRecorder
	// Build computes the desired objects.
	Build BuildFunc
	// Capabilities returns the optional APIs the cluster serves now.
	Capabilities func() autodetect.Capabilities
	// Version is the collector version this operator manages (reported in status.version).
	Version string
	// StatusWrites coalesces transitional status writes (a rollout in progress) per collector;
	// nil means statuswrite.DefaultWindow.
	StatusWrites  *statuswrite.Coalescer
	coalescerOnce sync.Once
	// pods throttles the reads of collectors' pods (see podReadInterval).
	pods podChecks
	// written is the status this process last wrote for each collector (see writtenStatuses).
	written writtenStatuses
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	otelcol := &v1beta1.OpenTelemetryCollector{}
	if err := r.Client.Get(ctx, req.NamespacedName, otelcol); err != nil {
		if apierrors.IsNotFound(err) {
			// Owned objects go with their owner (garbage collection); forget what we applied.
			r.Applier.Forget(req.Namespace, req.Name+"-")
			r.statusWrites().Forget(req.NamespacedName)
			r.pods.forget(req.NamespacedName)
			r.written.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !otelcol.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, otelcol)
	}
	if r.written.catchUp(otelcol) {
		log.V(1).Info("the cache is behind this operator's last status write; working from the written status")
	}
	if otelcol.Spec.ManagementState == v1beta1.ManagementStateUnmanaged {
		r.statusWrites().Forget(req.NamespacedName) // nothing of it is written while unmanaged
		r.pods.forget(req.NamespacedName)
		r.written.forget(req.NamespacedName)
		log.V(1).Info("unmanaged; leaving the collector and its objects alone")
		return ctrl.Result{}, nil
	}

	if err := v1alpha1.UnparsedConfig(otelcol); err != nil {
		// Stored as v1alpha1 with a config that does not parse: there is nothing to build from,
		// and nothing is applied or pruned until the configuration is corrected.
		return ctrl.Result{}, r.stalled(ctx, otelcol, err)
	}
	if found, err := r.linkedTargetAllocatorExists(ctx, otelcol); err != nil || !found {
		return ctrl.Result{}, err
	}
	caps := r.Capabilities()
	// Upgrade routines migrate a copy: the user's stored spec is never rewritten.
	migrated, upgradeChanges, upgradeErr := upgrade.Apply(*otelcol, otelcol.Status.Version, r.Version)
	if upgradeErr != nil {
		log.Info("not migrating the collector config", "reason", upgradeErr.Error())
	}
	desired, buildErr := r.Build(&migrated, caps)
	if buildErr != nil {
		return ctrl.Result{}, r.stalled(ctx, otelcol, buildErr)
	}
	sortForApply(desired)
	if needsFinalizer(desired) && !controllerutil.ContainsFinalizer(otelcol, Finalizer) {
		patch := client.MergeFrom(otelcol.DeepCopy())
		controllerutil.AddFinalizer(otelcol, Finalizer)
		if err := r.Client.Patch(ctx, otelcol, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	setOwners(desired, otelcol)

	existing, err := r.listOwned(ctx, otelcol, caps)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Objects missing from existing are created (the applier's CreateMissing): a create fails on an
	// object someone else made under the generated name, which is then refused (Adoptable).
	changes, applyErr := r.Applier.ApplyStages(ctx, desired, existing, applyStage)
	if conflict, ok := conflictOf(applyErr); ok {
		return r.conflicted(ctx, otelcol, conflict)
	}
	if applyErr == nil {
		pruned, err := r.prune(ctx, otelcol, desired, existing)
		changes = append(changes, pruned...)
		applyErr = err
	}
	if len(changes.Changed()) > 0 {
		log.Info("applied", "changes", changes.String())
		r.Recorder.Eventf(otelcol, nil, "Normal", "Applied", "Apply", "%s", truncate(changes.String(), 1000))
		if upgrade.Rewrites(upgradeChanges) {
			r.Recorder.Eventf(otelcol, nil, "Warning", "Upgraded", "Upgrade", "%s",
				truncate(upgrade.Summary(upgradeChanges)+"; the stored spec was not changed: update it the same way (see docs/upgrade.md)", 1000))
		}
	}
	workload := currentWorkload(desired, existing, changes)
	var crash *podCrash
	var result ctrl.Result
	if applyErr == nil {
		crash, result.RequeueAfter = r.podTrouble(ctx, otelcol, workload)
	}
	version := upgrade.RecordedVersion(*otelcol, r.Version, upgradeChanges)
	wait, err := r.updateStatus(ctx, otelcol, computeStatus(otelcol, desired, workload, version, applyErr, crash), applyErr)
	return requeueBy(result, wait), err
}

// podTrouble reads the pods of a collector whose workload is not available, or is rolling out (a
// new pod that cannot pull its image, a typo in a new spec.image, leaves the old pods available
// and the rollout waits forever), and returns the first container that cannot run, or nil. Pods
// are not watched: recheck says when to look again, so that a crash or a failed pull that
// starts (or ends) without a change of the workload's status is reported (zero: not needed).
// Reads are throttled per collector (podReadInterval); between two reads the last one's finding
// stands.
func (r *Reconciler) podTrouble(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, workload client.Object) (crash *podCrash, recheck time.Duration) {
	key := client.ObjectKeyFromObject(otelcol)
	ro, ok := rolloutOf(workload)
	if !ok || !(ro.unavailable() || !ro.upToDate) || workload.GetUID() == "" || r.APIReader == nil {
		r.pods.forget(key)
		return nil, 0
	}
	now := time.Now()
	if wait, last := r.pods.due(key, now); wait > 0 {
		return last, wait // what the last read found stands until the next one
	}
	crash, podStarting, err := findCrash(ctx, r.APIReader, otelcol.Namespace, ro.selector)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("not reporting the pods' state", "reason", err.Error())
	}
	r.pods.record(key, now, crash)
	if podStarting { // its pull or first crash is seconds away
		return crash, startingRecheck
	}
	return crash, unavailableRecheck
}

// unavailableRecheck is how often a collector whose workload is not available (or is rolling
// out) is reconciled again (a read of its pods; a write only when the status changes).
const unavailableRecheck = time.Minute

// startingRecheck is how often it is reconciled again while one of its pods is starting (for
// at most startingWindow after the pod's creation).
const startingRecheck = 10 * time.Second

// stalled records that the spec cannot be built. It is a terminal error: retrying will not help
// until the spec changes, which triggers a new reconcile.
func (r *Reconciler) stalled(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, buildErr error) error {
	st := *otelcol.Status.DeepCopy()
	msg := truncate(buildErr.Error(), 2000)
	setCondition(&st, otelcol.Generation, v1beta1.ConditionStalled, metav1.ConditionTrue, v1beta1.ReasonInvalidSpec, msg)
	setCondition(&st, otelcol.Generation, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonInvalidSpec, msg)
	meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
	if _, err := r.updateStatus(ctx, otelcol, st, buildErr); err != nil {
		return err
	}
	return reconcile.TerminalError(buildErr)
}

// conflicted records that an object the collector needs belongs to someone else. The
// collector is Stalled (nothing is applied) until the name is free; it is checked again every
// conflictRetry, since the other owner's deletion does not trigger this collector.
func (r *Reconciler) conflicted(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, conflict ownershipConflict) (ctrl.Result, error) {
	st := *otelcol.Status.DeepCopy()
	msg := truncate(conflict.Error(), 2000)
	setCondition(&st, otelcol.Generation, v1beta1.ConditionStalled, metav1.ConditionTrue, v1beta1.ReasonOwnershipConflict, msg)
	setCondition(&st, otelcol.Generation, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonOwnershipConflict, msg)
	meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
	if _, err := r.updateStatus(ctx, otelcol, st, conflict); err != nil && !errors.As(err, &ownershipConflict{}) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: conflictRetry}, nil
}

// conflictRetry is how often a collector stalled on an ownership conflict looks again.
const conflictRetry = time.Minute

// finalize removes the cluster-scoped RBAC of a collector being deleted, then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector) error {
	if !controllerutil.ContainsFinalizer(otelcol, Finalizer) {
		return nil
	}
	for _, k := range ownedKinds {
		if !k.clusterScoped {
			continue
		}
		objs, err := r.listKind(ctx, k, otelcol)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if _, err := r.Applier.Delete(ctx, o); err != nil {
				return err
			}
		}
	}
	patch := client.MergeFrom(otelcol.DeepCopy())
	controllerutil.RemoveFinalizer(otelcol, Finalizer)
	return r.Client.Patch(ctx, otelcol, patch)
}

// sortForApply orders desired objects by apply stage (see stagePodInputs): what pods need
// (ConfigMap, ServiceAccount, RBAC) exists before the workload that creates them, and the workload
// is written before the objects nothing waits for (Services, PodDisruptionBudget, NetworkPolicy...).
func sortForApply(objs []client.Object) {
	sort.SliceStable(objs, func(i, j int) bool { return kindIndex(objs[i]) < kindIndex(objs[j]) })
}

func needsFinalizer(objs []client.Object) bool {
	for _, o := range objs {
		if o.GetNamespace() == "" {
			return true
		}
	}
	return false
}

// setOwners records otelcol as the owner of every desired object: a controller reference on
// namespaced objects, the owner annotations on cluster-scoped ones.
func setOwners(desired []client.Object, otelcol *v1beta1.OpenTelemetryCollector) {
	for _, obj := range desired {
		if obj.GetNamespace() != "" {
			setOwner(obj, otelcol)
		} else {
			setClusterOwner(obj, otelcol)
		}
	}
}

// setOwner makes otelcol the controller owner of obj (namespaced objects only).
func setOwner(obj client.Object, otelcol *v1beta1.OpenTelemetryCollector) {
	ref := metav1.OwnerReference{
		APIVersion:         v1beta1.GroupVersion.String(),
		Kind:               "OpenTelemetryCollector",
		Name:               otelcol.Name,
		UID:                otelcol.UID,
		Controller:         ptrTrue(),
		BlockOwnerDeletion: ptrTrue(),
	}
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			refs[i] = ref
			obj.SetOwnerReferences(refs)
			return
		}
	}
	obj.SetOwnerReferences(append(refs, ref))
}

func ptrTrue() *bool { t := true; return &t }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
