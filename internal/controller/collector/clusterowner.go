package collector

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/naming"
)

// Cluster-scoped RBAC cannot carry an owner reference, and its names (<name>-<namespace>-...) and
// instance label (<namespace>.<name>, truncated to 63 characters by cutting the namespace first)
// are not unique: "otel-prod" in "team" and "otel" in "prod-team" get the same ClusterRole name,
// and two long names can share a label. The controller therefore records the owning collector in
// apply.OwnerAnnotation and treats a cluster-scoped object as the collector's only when that
// annotation names it. Objects without the annotation (created by upstream or an earlier version)
// are the collector's when their instance label and their name are the ones it generates.

const ownerKind = "OpenTelemetryCollector"

// ownerValue is the apply.OwnerAnnotation value of otelcol's cluster-scoped objects.
func ownerValue(otelcol *v1beta1.OpenTelemetryCollector) string {
	return ownerKind + "/" + otelcol.Namespace + "/" + otelcol.Name
}

// setClusterOwner records otelcol as the owner of the cluster-scoped object obj.
func setClusterOwner(obj client.Object, otelcol *v1beta1.OpenTelemetryCollector) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[apply.OwnerAnnotation] = ownerValue(otelcol)
	ann[apply.OwnerUIDAnnotation] = string(otelcol.UID)
	obj.SetAnnotations(ann)
}

// ownsClusterObject reports whether the cluster-scoped object o belongs to otelcol.
func ownsClusterObject(o client.Object, otelcol *v1beta1.OpenTelemetryCollector) bool {
	if owner, ok := o.GetAnnotations()[apply.OwnerAnnotation]; ok {
		return owner == ownerValue(otelcol)
	}
	if o.GetLabels()[ManagedByLabel] != ManagedByValue || o.GetLabels()[InstanceLabel] != naming.Instance(otelcol.Namespace, otelcol.Name) {
		return false
	}
	name := o.GetName()
	return name == naming.ClusterRole(otelcol.Name, otelcol.Namespace) || name == naming.ClusterRoleBinding(otelcol.Name, otelcol.Namespace)
}

// ownershipConflict is a desired cluster-scoped object that exists and belongs to someone else.
type ownershipConflict struct {
	kind, name, owner string
}

func (c ownershipConflict) Error() string {
	return fmt.Sprintf("%s %q already exists and belongs to %s; the operator does not take it over "+
		"(rename this collector, or delete the other owner's object if it is stale)", c.kind, c.name, c.owner)
}

// checkClusterOwnership returns an ownershipConflict for the first desired cluster-scoped object
// that exists but is not otelcol's. Objects in existing are otelcol's already; the others are read
// uncached (the cache only holds objects with our labels), which happens only until they are ours.
func (r *Reconciler) checkClusterOwnership(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, desired []client.Object, existing apply.Objects) error {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	for _, d := range desired {
		if d.GetNamespace() != "" {
			continue
		}
		if _, ok := existing[apply.KeyOf(d)]; ok {
			continue
		}
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(d.GetObjectKind().GroupVersionKind())
		err := reader.Get(ctx, client.ObjectKey{Name: d.GetName()}, live)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", live.Kind, d.GetName(), err)
		}
		if ownsClusterObject(live, otelcol) {
			continue
		}
		owner := live.GetAnnotations()[apply.OwnerAnnotation]
		if owner == "" {
			owner = "another owner (it has no " + apply.OwnerAnnotation + " annotation naming this collector)"
		}
		return ownershipConflict{kind: d.GetObjectKind().GroupVersionKind().Kind, name: d.GetName(), owner: owner}
	}
	return nil
}

// requestFromInstance maps a cluster-scoped object to its collector: by apply.OwnerAnnotation, or,
// for objects without it, by the instance label <ns>.<name> (ambiguous once truncated; a wrong
// guess only costs a reconcile that finds nothing to do).
func requestFromInstance(obj client.Object) []reconcile.Request {
	if obj.GetLabels()[ManagedByLabel] != ManagedByValue {
		return nil
	}
	if owner, ok := obj.GetAnnotations()[apply.OwnerAnnotation]; ok {
		parts := strings.Split(owner, "/")
		if len(parts) != 3 || parts[0] != ownerKind {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: parts[1], Name: parts[2]}}}
	}
	ns, name, ok := strings.Cut(obj.GetLabels()[InstanceLabel], ".")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
