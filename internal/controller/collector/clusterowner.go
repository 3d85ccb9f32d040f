package collector

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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

// ownershipConflict is a desired object that exists and belongs to someone else.
type ownershipConflict struct {
	kind, namespace, name, owner string
}

func (c ownershipConflict) Error() string {
	name := c.name
	if c.namespace != "" {
		name = c.namespace + "/" + c.name
	}
	return fmt.Sprintf("%s %q already exists and belongs to %s; the operator does not take it over "+
		"(rename this collector, or delete the other object if it is stale)", c.kind, name, c.owner)
}

// checkOwnership returns an ownershipConflict for the first desired object that exists but is not
// otelcol's: a namespaced object without otelcol's controller reference, a cluster-scoped one that
// ownsClusterObject rejects. Forced server-side apply would otherwise take over (or, for an
// immutable field, delete) an object someone else created under the generated name. Objects in
// existing are otelcol's already; the others are read uncached (the cache only holds objects with
// our labels), which happens only until they exist as ours: a converged collector reads nothing.
// The reads are served from the API server's watch cache (resourceVersion 0), which costs it half
// of a read from etcd (bench/apicost) and can lag etcd by moments; so can any read, since an object
// may be created between the read and the apply.
func (r *Reconciler) checkOwnership(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, desired []client.Object, existing apply.Objects) error {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	var missing []client.Object
	for _, d := range desired {
		if _, ok := existing[apply.KeyOf(d)]; !ok {
			missing = append(missing, d)
		}
	}
	// The reads are independent round trips (a new collector has all of its objects missing):
	// send them together, then judge them in desired's order.
	lives := make([]*metav1.PartialObjectMetadata, len(missing))
	errs := make([]error, len(missing))
	sem := make(chan struct{}, ownershipReads)
	var wg sync.WaitGroup
	for i, d := range missing {
		lives[i] = &metav1.PartialObjectMetadata{}
		lives[i].SetGroupVersionKind(d.GetObjectKind().GroupVersionKind())
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = reader.Get(ctx, client.ObjectKeyFromObject(d), lives[i], fromWatchCache)
		}()
	}
	wg.Wait()
	for i, d := range missing {
		live, err := lives[i], errs[i]
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", live.Kind, d.GetName(), err)
		}
		var owner string
		if d.GetNamespace() == "" {
			if ownsClusterObject(live, otelcol) {
				continue
			}
			owner = live.GetAnnotations()[apply.OwnerAnnotation]
			if owner == "" {
				owner = "another owner (it has no " + apply.OwnerAnnotation + " annotation naming this collector)"
			}
		} else {
			if ownedBy(live, otelcol) {
				continue
			}
			owner = "another owner (it has no controller reference to this collector)"
			if ref := metav1.GetControllerOfNoCopy(live); ref != nil {
				owner = ref.Kind + " " + ref.Name
			}
		}
		return ownershipConflict{kind: d.GetObjectKind().GroupVersionKind().Kind, namespace: d.GetNamespace(), name: d.GetName(), owner: owner}
	}
	return nil
}

// fromWatchCache asks the API server for its watch cache's copy of an object.
var fromWatchCache = &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}

// ownershipReads bounds checkOwnership's concurrent reads.
const ownershipReads = 4

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
