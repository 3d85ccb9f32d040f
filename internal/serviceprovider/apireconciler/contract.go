// Package apireconciler is a small generic service-provider reconciler on controller-runtime, our
// equivalent of the OpenMCP APIReconciler: it reconciles a service API object T in the onboarding
// cluster against a provider configuration C in the platform cluster, honours the
// openmcp.cloud/operation annotation on both, keeps a finalizer, obtains control-plane and workload
// cluster access through the openmcp-operator clusteraccess library, writes status only when it
// changed (observedGeneration only on success), emits events on Ready transitions and requeues at
// the configuration's poll interval. Providers plug in a Reconciler with the service logic.
package apireconciler

import (
	"context"
	"time"

	"github.com/openmcp-project/controller-utils/pkg/clusters"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperationAnnotation is the OpenMCP operation annotation.
const OperationAnnotation = "openmcp.cloud/operation"

// Values of OperationAnnotation.
const (
	// OperationIgnore makes the provider skip the object (or, on the configuration, every object).
	OperationIgnore = "ignore"
	// OperationReconcile forces one reconcile; the provider removes the annotation.
	OperationReconcile = "reconcile"
)

// API is a service API object.
type API interface {
	client.Object
	// GetStatus returns the status, compared before and after a reconcile.
	GetStatus() any
	// GetConditions returns a pointer to the status conditions.
	GetConditions() *[]metav1.Condition
	// GetPhase returns status.phase.
	GetPhase() string
	// SetPhase sets status.phase.
	SetPhase(string)
	// SetObservedGeneration sets status.observedGeneration.
	SetObservedGeneration(int64)
	// Finalizer is the finalizer the provider keeps on the object.
	Finalizer() string
}

// Config is the provider configuration; exactly one, named after the provider, is used.
type Config interface {
	client.Object
	// PollInterval is how often each API object is reconciled.
	PollInterval() time.Duration
}

// ClusterContext is the cluster access of one API object.
type ClusterContext struct {
	// MCP is the control plane of the object.
	MCP *clusters.Cluster
	// MCPAccessSecret is the platform Secret with the control plane's kubeconfig (key "kubeconfig").
	MCPAccessSecret types.NamespacedName
	// Workload is the workload cluster, nil when the provider asked for none.
	Workload *clusters.Cluster
	// WorkloadAccessSecret is the platform Secret with the workload cluster's kubeconfig.
	WorkloadAccessSecret types.NamespacedName
}

// Reconciler is the service logic. Both methods set the object's phase and Ready condition; the
// framework patches the status.
type Reconciler[T API, C Config] interface {
	// CreateOrUpdate makes the service match obj. A RequeueAfter result means "not done yet".
	CreateOrUpdate(ctx context.Context, obj T, cfg C, cc ClusterContext) (ctrl.Result, error)
	// Delete removes what CreateOrUpdate made. It returns RequeueAfter while something remains;
	// the finalizer is removed only after an empty result and no error. cfg is the zero C when
	// the configuration does not exist (deletion does not wait for it); cc is nil when the
	// access requests are gone.
	Delete(ctx context.Context, obj T, cfg C, cc *ClusterContext) (ctrl.Result, error)
}

// Maintainer is implemented by a Reconciler with upkeep that must go on while the configuration
// is missing, such as renewing credentials a running service depends on. The framework calls
// Maintain instead of CreateOrUpdate when the configuration does not exist and the object's
// cluster access was granted before; it creates no access of its own for it.
type Maintainer[T API] interface {
	// Maintain keeps what already runs working; it must not create the service.
	Maintain(ctx context.Context, obj T, cc ClusterContext) error
}

// operationKey is the context key of OperationRequested.
type operationKey struct{}

// OperationRequested says whether this reconcile was asked for with the operation annotation
// OperationReconcile on the API object: the Reconciler may then also ask the systems it drives to
// retry what they gave up on.
func OperationRequested(ctx context.Context) bool {
	v, _ := ctx.Value(operationKey{}).(bool)
	return v
}

// WithOperationRequested returns ctx marked as OperationRequested (the framework does this; tests
// of a Reconciler may too).
func WithOperationRequested(ctx context.Context) context.Context {
	return context.WithValue(ctx, operationKey{}, true)
}
