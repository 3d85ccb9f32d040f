package apireconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openmcp-project/controller-utils/pkg/clusters"
	"github.com/openmcp-project/openmcp-operator/lib/clusteraccess"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Controller reconciles one kind of service API object. Build it with New.
type Controller[T API, C Config] struct {
	opts Options[T, C]
}

// Options are the parts of a Controller.
type Options[T API, C Config] struct {
	// ProviderName is the name of the provider and of its configuration object.
	ProviderName string
	// NewObject and NewConfig return empty objects of the two kinds.
	NewObject func() T
	// NewConfig returns an empty configuration object.
	NewConfig func() C
	// Onboarding is a client of the onboarding cluster, where the API objects are.
	Onboarding client.Client
	// Platform is a client of the platform cluster, where the configuration and the cluster
	// requests are.
	Platform client.Client
	// ClusterAccess obtains control-plane and workload access per object.
	ClusterAccess clusteraccess.Reconciler
	// Reconciler is the service logic.
	Reconciler Reconciler[T, C]
	// Recorder emits events on the API objects.
	Recorder recorder.EventRecorder
	// WarningReasons are the Ready reasons whose events are Warnings (the framework's own failure
	// reasons are always Warnings).
	WarningReasons []string
	// DeletionRequeue is how soon a blocked or unfinished deletion is retried; default 5s.
	DeletionRequeue time.Duration
	// MaintenanceInterval is how often a Reconciler that is a Maintainer is called while the
	// configuration is missing; default 1m.
	MaintenanceInterval time.Duration
	// Workers is how many objects are reconciled at the same time; default 4. One object whose
	// clusters do not answer then does not hold up the others.
	Workers int
	// RequestTimeout bounds every single request to a control plane or workload cluster (the
	// REST client timeout of the clients in ClusterContext, dialing and TLS included); default
	// 30s. A cluster that accepts connections and never answers then fails one request, not the
	// whole ReconcileTimeout, and the worker is free again.
	RequestTimeout time.Duration
	// Labels, when set, returns labels the controller keeps on every object (written with the
	// finalizer, before anything is created, and restored when changed), e.g. its instance ID.
	Labels func(T) map[string]string
	// ReconcileTimeout bounds one reconcile of one object, every request to every cluster
	// included (they all take its context); default 2m. A reconcile that runs out fails with
	// the deadline in its status and is retried with backoff.
	ReconcileTimeout time.Duration
}

// New returns a Controller.
func New[T API, C Config](opts Options[T, C]) *Controller[T, C] {
	if opts.DeletionRequeue <= 0 {
		opts.DeletionRequeue = 5 * time.Second
	}
	if opts.MaintenanceInterval <= 0 {
		opts.MaintenanceInterval = time.Minute
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.ReconcileTimeout <= 0 {
		opts.ReconcileTimeout = 2 * time.Minute
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	return &Controller[T, C]{opts: opts}
}

// Reconcile runs the skeleton: get, operation annotation, deferred status patch, configuration,
// deletion or finalizer + cluster access + CreateOrUpdate, requeue at the poll interval.
func (c *Controller[T, C]) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	// The status is written with the caller's context, so that a reconcile that ran out of time
	// still reports why.
	statusCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, c.opts.ReconcileTimeout)
	defer cancel()
	log := ctrl.LoggerFrom(ctx)
	obj := c.opts.NewObject()
	if err := c.opts.Onboarding.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch obj.GetAnnotations()[OperationAnnotation] {
	case OperationIgnore:
		log.V(1).Info("skipping: operation annotation says ignore")
		return ctrl.Result{}, nil
	case OperationReconcile:
		if err := c.dropOperation(ctx, c.opts.Onboarding, obj); err != nil {
			return ctrl.Result{}, err
		}
		ctx = WithOperationRequested(ctx)
	}

	before := obj.DeepCopyObject().(T)
	defer func() {
		if reterr == nil {
			obj.SetObservedGeneration(obj.GetGeneration())
		}
		if err := c.patchStatus(statusCtx, before, obj); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()

	cfg := c.opts.NewConfig()
	if err := c.opts.Platform.Get(ctx, types.NamespacedName{Name: c.opts.ProviderName}, cfg); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading the provider configuration %q: %w", c.opts.ProviderName, err)
		}
		if !obj.GetDeletionTimestamp().IsZero() {
			// Deletion does not need the configuration (the Reconciler gets the zero C): a
			// configuration removed first must not keep the object, and the control plane, from
			// ever being deleted.
			var none C
			return c.reconcileDelete(ctx, req, obj, none)
		}
		Progressing(obj, ReasonProviderConfigMissing, fmt.Sprintf("no provider configuration named %q found in the platform cluster", c.opts.ProviderName))
		return c.maintain(ctx, req, obj) // the configuration watch brings the object back
	}
	switch cfg.GetAnnotations()[OperationAnnotation] {
	case OperationIgnore:
		log.V(1).Info("skipping: operation annotation on the provider configuration says ignore")
		return ctrl.Result{}, nil
	case OperationReconcile:
		// The configuration's update event re-enqueues every object, which is the point.
		if err := c.dropOperation(ctx, c.opts.Platform, cfg); err != nil {
			return ctrl.Result{}, err
		}
	}

	if !obj.GetDeletionTimestamp().IsZero() {
		return c.reconcileDelete(ctx, req, obj, cfg)
	}

	// The finalizer (and the kept labels) go on before anything is created, so nothing can be
	// left behind.
	if want := c.missingLabels(obj); !controllerutil.ContainsFinalizer(obj, obj.Finalizer()) || len(want) > 0 {
		// A merge patch replaces the whole finalizer list: the resourceVersion precondition keeps
		// it from dropping a finalizer someone else added meanwhile.
		patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(obj, obj.Finalizer())
		if len(want) > 0 {
			l := obj.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			for k, v := range want {
				l[k] = v
			}
			obj.SetLabels(l)
		}
		if err := c.opts.Onboarding.Patch(ctx, obj, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer and labels: %w", err)
		}
	}

	if r, err := c.opts.ClusterAccess.Reconcile(ctx, req); err != nil || r.RequeueAfter > 0 {
		if err != nil {
			Progressing(obj, ReasonWaitingForClusterAccess, "requesting cluster access: "+err.Error())
			return ctrl.Result{}, err
		}
		Progressing(obj, ReasonWaitingForClusterAccess, "waiting for access to the control plane and workload cluster to be granted")
		return r, nil
	}
	cc, err := c.clusterContext(ctx, req)
	if err != nil {
		Progressing(obj, ReasonWaitingForClusterAccess, err.Error())
		return ctrl.Result{}, err
	}
	r, err := c.opts.Reconciler.CreateOrUpdate(ctx, obj, cfg, *cc)
	if err != nil {
		Progressing(obj, ReasonReconcileError, err.Error())
		return ctrl.Result{}, err
	}
	if r.RequeueAfter == 0 || r.RequeueAfter > cfg.PollInterval() {
		r.RequeueAfter = cfg.PollInterval()
	}
	return r, nil
}

// maintain runs the Reconciler's upkeep while the configuration is missing, with the access the
// object was granted before (none is requested here), and comes back at MaintenanceInterval. An
// object that never got access, or a Reconciler that is no Maintainer, waits for the configuration.
func (c *Controller[T, C]) maintain(ctx context.Context, req ctrl.Request, obj T) (ctrl.Result, error) {
	m, ok := c.opts.Reconciler.(Maintainer[T])
	if !ok || !controllerutil.ContainsFinalizer(obj, obj.Finalizer()) {
		return ctrl.Result{}, nil
	}
	cc, err := c.clusterContext(ctx, req)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		// Access that is not granted (yet, or any more) is no reason for a backoff loop.
		ctrl.LoggerFrom(ctx).Info("no cluster access for upkeep without a provider configuration", "reason", err.Error())
		return ctrl.Result{RequeueAfter: c.opts.MaintenanceInterval}, nil
	}
	if err := m.Maintain(ctx, obj, *cc); err != nil {
		Progressing(obj, ReasonProviderConfigMissing, readyOf(obj).Message+"; upkeep failed: "+err.Error())
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: c.opts.MaintenanceInterval}, nil
}

func (c *Controller[T, C]) reconcileDelete(ctx context.Context, req ctrl.Request, obj T, cfg C) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, obj.Finalizer()) {
		return ctrl.Result{}, nil
	}
	cc, err := c.clusterContext(ctx, req)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			// Access exists but does not work right now: never skip the deletion guard for that.
			Terminating(obj, ReasonWaitingForClusterAccess, "waiting for cluster access to check and delete: "+err.Error())
			return ctrl.Result{}, err
		}
		// The access requests are gone or never made: nothing was created in those clusters.
		ctrl.LoggerFrom(ctx).Info("deleting without cluster access", "reason", err.Error())
		cc = nil
	}
	r, err := c.opts.Reconciler.Delete(ctx, obj, cfg, cc)
	if err != nil {
		Terminating(obj, ReasonReconcileError, "deleting managed resources: "+err.Error())
		return ctrl.Result{}, err
	}
	if r.RequeueAfter > 0 {
		return r, nil
	}
	r, err = c.opts.ClusterAccess.ReconcileDelete(ctx, req)
	if err != nil {
		Terminating(obj, ReasonDeleting, "releasing cluster access: "+err.Error())
		return ctrl.Result{}, err
	}
	if r.RequeueAfter > 0 {
		Terminating(obj, ReasonDeleting, "waiting for cluster access to be released")
		return r, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, obj.Finalizer())
	if err := c.opts.Onboarding.Patch(ctx, obj, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("removing the finalizer: %w", err)
	}
	return ctrl.Result{}, nil
}

// missingLabels are the labels of Options.Labels that obj lacks or carries with another value.
func (c *Controller[T, C]) missingLabels(obj T) map[string]string {
	if c.opts.Labels == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range c.opts.Labels(obj) {
		if cur, ok := obj.GetLabels()[k]; !ok || cur != v {
			out[k] = v
		}
	}
	return out
}

// clusterContext reads the granted access of the object.
func (c *Controller[T, C]) clusterContext(ctx context.Context, req ctrl.Request) (*ClusterContext, error) {
	var cc ClusterContext
	mcp, err := c.opts.ClusterAccess.MCPCluster(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("control plane access: %w", err)
	}
	ar, err := c.opts.ClusterAccess.MCPAccessRequest(ctx, req)
	if err != nil || ar.Status.SecretRef == nil {
		return nil, errors.Join(errors.New("control plane access request has no secret"), err)
	}
	if mcp, err = withRequestTimeout(mcp, c.opts.RequestTimeout); err != nil {
		return nil, fmt.Errorf("control plane access: %w", err)
	}
	cc.MCP, cc.MCPAccessSecret = mcp, types.NamespacedName{Namespace: ar.Namespace, Name: ar.Status.SecretRef.Name}
	wl, err := c.opts.ClusterAccess.WorkloadCluster(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("workload cluster access: %w", err)
	}
	ar, err = c.opts.ClusterAccess.WorkloadAccessRequest(ctx, req)
	if err != nil || ar.Status.SecretRef == nil {
		return nil, errors.Join(errors.New("workload access request has no secret"), err)
	}
	if wl, err = withRequestTimeout(wl, c.opts.RequestTimeout); err != nil {
		return nil, fmt.Errorf("workload cluster access: %w", err)
	}
	cc.Workload, cc.WorkloadAccessSecret = wl, types.NamespacedName{Namespace: ar.Namespace, Name: ar.Status.SecretRef.Name}
	return &cc, nil
}

// withRequestTimeout returns c with clients whose every request ends after d. The cluster access
// library builds its clients without a timeout, and neither it nor controller-utils can be told
// otherwise, so the clients are built again from a copy of c's REST config. A cluster without a
// REST config (a test stand-in) is returned as it is.
func withRequestTimeout(c *clusters.Cluster, d time.Duration) (*clusters.Cluster, error) {
	if c == nil || !c.HasRESTConfig() {
		return c, nil
	}
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Timeout = d
	out := clusters.New(c.ID()).WithRESTConfig(cfg)
	if err := out.InitializeClient(c.Scheme()); err != nil {
		return nil, err
	}
	return out, nil
}

// dropOperation removes the one-shot reconcile annotation.
func (c *Controller[T, C]) dropOperation(ctx context.Context, cl client.Client, obj client.Object) error {
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	a := obj.GetAnnotations()
	delete(a, OperationAnnotation)
	obj.SetAnnotations(a)
	if err := cl.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("removing the %s annotation: %w", OperationAnnotation, err)
	}
	return nil
}

// patchStatus writes the status when it changed and emits an event when Ready changed.
func (c *Controller[T, C]) patchStatus(ctx context.Context, before, after T) error {
	if equality.Semantic.DeepEqual(before.GetStatus(), after.GetStatus()) {
		return nil
	}
	if err := c.opts.Onboarding.Status().Patch(ctx, after, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching status: %w", err)
	}
	c.event(before, after)
	return nil
}

// event reports a change of the Ready condition's status or reason (a transition), not every
// reconcile.
func (c *Controller[T, C]) event(before, after T) {
	if c.opts.Recorder == nil {
		return
	}
	now := readyOf(after)
	if typ, ok := transition(readyOf(before), now, c.isWarning); ok {
		c.opts.Recorder.Eventf(after, nil, typ, now.Reason, "Reconcile", "%s", now.Message)
	}
}

// transition decides whether a change of the Ready condition deserves an event, and its type: a
// new status or reason always does; a new message only for warnings (a new problem is news, a new
// progress detail is not).
func transition(was, now *metav1.Condition, warning func(string) bool) (string, bool) {
	if now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason && was.Message == now.Message) {
		return "", false
	}
	if was != nil && was.Status == now.Status && was.Reason == now.Reason && !warning(now.Reason) {
		return "", false
	}
	if warning(now.Reason) {
		return corev1.EventTypeWarning, true
	}
	return corev1.EventTypeNormal, true
}

func (c *Controller[T, C]) isWarning(reason string) bool {
	switch reason {
	case ReasonProviderConfigMissing, ReasonReconcileError:
		return true
	}
	for _, r := range c.opts.WarningReasons {
		if r == reason {
			return true
		}
	}
	return false
}
