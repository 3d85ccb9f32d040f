package podmutation

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/sidecar"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// NamespaceMetadata is the object the Namespace metadata informer caches: Namespaces as
// metadata only, so the webhook reads their annotations without a request to the API server.
func NamespaceMetadata() *metav1.PartialObjectMetadata {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return ns
}

// podRequest holds what one admission reads, each at most once: the namespace's metadata (from
// the cache) and the pod's owner chain (uncached metadata reads, only when an injection needs
// it).
type podRequest struct {
	h   *Handler
	ctx context.Context
	pod *corev1.Pod

	nsRead bool
	ns     metav1.ObjectMeta
	nsErr  error

	// outcome and reason are the admissionmetrics decision noted so far (see note).
	outcome admissionmetrics.Outcome
	reason  string
	// sidecarRemoved: the pod said "false" and carried a sidecar, which was removed.
	sidecarRemoved bool

	ownersRead bool
	owners     []instrumentation.Owner
	// confirmed are the UIDs of owners the API server showed to exist: a ReplicaSet or Job read
	// with the UID the pod's reference claims, and the owners that object names.
	confirmed map[types.UID]bool
}

// namespace returns the pod's namespace metadata from the cache, falling back to one uncached
// read when the cache does not have it yet (a namespace created a moment ago).
func (r *podRequest) namespace() (metav1.ObjectMeta, error) {
	if r.nsRead {
		return r.ns, r.nsErr
	}
	r.nsRead = true
	ns := NamespaceMetadata()
	key := client.ObjectKey{Name: r.pod.Namespace}
	err := r.h.opts.Namespaces.Get(r.ctx, key, ns)
	if apierrors.IsNotFound(err) {
		err = r.h.opts.APIReader.Get(r.ctx, key, ns)
	}
	if err != nil {
		r.nsErr = fmt.Errorf("reading namespace %q: %w", r.pod.Namespace, err)
		return r.ns, r.nsErr
	}
	r.ns = ns.ObjectMeta
	return r.ns, nil
}

// ownerChain returns the pod's owner references followed by the owners of its ReplicaSet or Job
// (their Deployment or CronJob), read as metadata from the API server, or from the handler's
// short-lived owner cache when another pod of the same ReplicaSet or Job was admitted a moment
// ago. An owner that cannot be read, or whose UID is not the one the pod's reference claims,
// only leaves its own owners out: the review may be forged (anyone who reaches the webhook port
// can send one), and the owners of an object are told only to a caller that already knows the
// object's UID.
func (r *podRequest) ownerChain() []instrumentation.Owner {
	if r.ownersRead {
		return r.owners
	}
	r.ownersRead = true
	r.confirmed = map[types.UID]bool{}
	confirm := func(uid types.UID, owners []instrumentation.Owner) {
		r.confirmed[uid] = true
		for _, o := range owners {
			r.confirmed[o.UID] = true
		}
	}
	chain := instrumentation.OwnersOf(r.pod.OwnerReferences)
	for _, ref := range r.pod.OwnerReferences {
		if !instrumentation.NeedsLookup(ref.Kind) {
			continue
		}
		gvk := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
		if ref.Kind == "Job" {
			gvk = batchv1.SchemeGroupVersion.WithKind("Job")
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group != gvk.Group {
			continue
		}
		if owners, ok := r.h.owners.get(ref.UID); ok {
			confirm(ref.UID, owners)
			chain = append(chain, owners...)
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		if err := r.h.opts.APIReader.Get(r.ctx, client.ObjectKey{Namespace: r.pod.Namespace, Name: ref.Name}, obj); err != nil {
			logf.FromContext(r.ctx).V(1).Info("the pod's owner is not readable; its owners are left out of the attributes",
				"kind", ref.Kind, "name", ref.Name, "error", err.Error())
			continue
		}
		if ref.UID == "" || obj.GetUID() != ref.UID {
			logf.FromContext(r.ctx).V(1).Info("the pod's owner is not the object its reference claims; its owners are left out of the attributes",
				"kind", ref.Kind, "name", ref.Name)
			continue
		}
		owners := instrumentation.OwnersOf(obj.GetOwnerReferences())
		r.h.owners.put(ref.UID, owners)
		confirm(ref.UID, owners)
		chain = append(chain, owners...)
	}
	r.owners = chain
	return chain
}

// sidecarOwners are the pod's ReplicaSet and Deployment, for the collector sidecar's attributes.
func (r *podRequest) sidecarOwners() sidecar.Owners {
	var o sidecar.Owners
	ref := ownerOfKind(r.pod.OwnerReferences, "ReplicaSet")
	if ref == nil {
		return o
	}
	o.ReplicaSetName, o.ReplicaSetUID = ref.Name, string(ref.UID)
	for _, owner := range r.ownerChain() {
		if owner.Kind == "Deployment" {
			o.DeploymentName, o.DeploymentUID = owner.Name, string(owner.UID)
			break
		}
	}
	return o
}

// eventSubject returns the object a Warning Event about the pod's injection is about: the highest
// owner the request knows (a Deployment rather than its ReplicaSet, a CronJob rather than its
// Job), and only once the API server has shown that it exists with the UID the review claims
// (from the owner chain's reads, or one metadata read of that owner). nil means no Event: a pod
// with no owner, or a review whose owner does not check out. The webhook cannot tell a review the
// API server sent from one posted straight to its port by any pod that reaches it, so the caller
// must prove it knows a real workload of that namespace before the operator writes an Event there.
func (r *podRequest) eventSubject() client.Object {
	chain := r.ownerChain()
	if len(chain) == 0 {
		return nil
	}
	o := chain[len(chain)-1]
	if o.UID == "" {
		return nil
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(o.APIVersion, o.Kind))
	obj.SetNamespace(r.pod.Namespace)
	obj.SetName(o.Name)
	if !r.confirmed[o.UID] {
		got := &metav1.PartialObjectMetadata{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if err := r.h.opts.APIReader.Get(r.ctx, client.ObjectKeyFromObject(obj), got); err != nil || got.GetUID() != o.UID {
			logf.FromContext(r.ctx).V(1).Info("the pod's owner does not check out; no Event", "kind", o.Kind, "name", o.Name)
			return nil
		}
	}
	obj.SetUID(o.UID)
	return obj
}
