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
	StatusWrites *statuswrite.Coalescer
	// Rollback are the operator-wide automatic rollback settings (rollback.go); each collector
	// can turn it on or off with AutoRollbackAnnotation.
	Rollback      RollbackOptions
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
	autoRollback := r.Rollback.enabledFor(otelcol)
	var rec *lastReady
	if autoRollback {
		var err error
		if rec, err = r.readLastReady(ctx, otelcol); err != nil {
			return ctrl.Result{}, err
		}
	}
	held := rec != nil && heldAt(otelcol)
	source := otelcol
	if held { // rolled back: the last Ready generation's objects until the spec changes
		source = rec.asOf(otelcol)
	}
	c, done, err := r.converge(ctx, otelcol, source, caps, true)
	if done != nil {
		return *done, err
	}
	version := upgrade.RecordedVersion(*otelcol, r.Version, c.upgradeChanges)
	st := computeStatus(otelcol, c.desired, c.workload, version, c.applyErr, c.crash)
	result := ctrl.Result{RequeueAfter: c.recheck}
	switch {
	case !autoRollback || c.applyErr != nil || c.workload == nil:
		if !autoRollback && c.applyErr == nil {
			if err := r.dropLastReady(ctx, otelcol, c.existing); err != nil {
				return ctrl.Result{}, err
			}
		}
	case held:
		st = rolledBackStatus(otelcol, st, meta.FindStatusCondition(otelcol.Status.Conditions, v1beta1.ConditionRolledBack).Message)
	default:
		cause, wait := rollbackCause(otelcol, rec, st, c.crash, r.Rollback.deadlineFor(otelcol), time.Now())
		switch {
		case cause != "":
			msg := rollbackMessage(otelcol, rec, cause)
			log.Info("rolling back to the last Ready generation", "generation", otelcol.Generation, "to", rec.generation, "cause", cause)
			r.pods.forget(req.NamespacedName)
			if c, done, err = r.converge(ctx, otelcol, rec.asOf(otelcol), caps, false); done != nil {
				return *done, err
			}
			st = computeStatus(otelcol, c.desired, c.workload, version, c.applyErr, nil)
			if c.applyErr == nil {
				st = rolledBackStatus(otelcol, st, msg)
				held = true
			}
			result.RequeueAfter = startingRecheck
		case wait > 0:
			result = requeueBy(result, wait)
		case meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionReady) && (rec == nil || rec.generation != otelcol.Generation):
			if err := r.recordLastReady(ctx, otelcol, c.existing); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if !held {
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionRolledBack)
	}
	wait, err := r.updateStatus(ctx, otelcol, st, c.applyErr)
	return requeueBy(result, wait), err
}

// convergence is what one pass of converge found and did.
type convergence struct {
	desired        []client.Object
	existing       apply.Objects
	upgradeChanges []upgrade.Change
	workload       client.Object
	crash          *podCrash
	recheck        time.Duration
	applyErr       error
}

// converge builds the objects of source (otelcol itself, or a copy with the last Ready
// generation's spec), applies them as otelcol's, prunes what is no longer wanted and, with
// readPods, reads the pods of a workload that is not available (podTrouble). A non-nil done ends
// the reconcile with that result and err (the spec cannot be built, or an object belongs to
// someone else: the status says so).
func (r *Reconciler) converge(ctx context.Context, otelcol, source *v1beta1.OpenTelemetryCollector, caps autodetect.Capabilities, readPods bool) (c convergence, done *ctrl.Result, err error) {
	log := ctrl.LoggerFrom(ctx)
	// Upgrade routines migrate a copy: the user's stored spec is never rewritten.
	migrated, upgradeChanges, upgradeErr := upgrade.Apply(*source, otelcol.Status.Version, r.Version)
	if upgradeErr != nil {
		log.Info("not migrating the collector config", "reason", upgradeErr.Error())
	}
	c.upgradeChanges = upgradeChanges
	desired, buildErr := r.Build(&migrated, caps)
	if buildErr != nil {
		return c, &ctrl.Result{}, r.stalled(ctx, otelcol, buildErr)
	}
	sortForApply(desired)
	if needsFinalizer(desired) && !controllerutil.ContainsFinalizer(otelcol, Finalizer) {
		patch := client.MergeFrom(otelcol.DeepCopy())
		controllerutil.AddFinalizer(otelcol, Finalizer)
		if err := r.Client.Patch(ctx, otelcol, patch); err != nil {
			return c, &ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	setOwners(desired, otelcol)
	c.desired = desired

	existing, err := r.listOwned(ctx, otelcol, caps)
	if err != nil {
		return c, &ctrl.Result{}, err
	}
	c.existing = existing
	// Objects missing from existing are created (the applier's CreateMissing): a create fails on an
	// object someone else made under the generated name, which is then refused (Adoptable).
	changes, applyErr := r.Applier.ApplyStages(ctx, desired, existing, applyStage)
	if conflict, ok := conflictOf(applyErr); ok {
		res, err := r.conflicted(ctx, otelcol, conflict)
		return c, &res, err
	}
	if applyErr == nil {
		pruned, err := r.prune(ctx, otelcol, desired, existing)
		changes = append(changes, pruned...)
		applyErr = err
	}
	c.applyErr = applyErr
	if len(changes.Changed()) > 0 {
		log.Info("applied", "changes", changes.String())
		r.Recorder.Eventf(otelcol, nil, "Normal", "Applied", "Apply", "%s", truncate(changes.String(), 1000))
		if upgrade.Rewrites(upgradeChanges) {
			r.Recorder.Eventf(otelcol, nil, "Warning", "Upgraded", "Upgrade", "%s",
				truncate(upgrade.Summary(upgradeChanges)+"; the stored spec was not changed: update it the same way (see docs/upgrade.md)", 1000))
		}
	}
	c.workload = currentWorkload(desired, existing, changes)
	if applyErr == nil && readPods {
		c.crash, c.recheck = r.podTrouble(ctx, otelcol, c.workload)
	}
	return c, nil, nil
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
