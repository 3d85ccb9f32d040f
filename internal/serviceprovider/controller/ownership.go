package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// ours says whether the provider created o for instance id: only objects carrying both labels it
// writes are its own. Objects it did not create are never adopted, changed or deleted.
func ours(o metav1.Object, id string) bool {
	l := o.GetLabels()
	return l[instance.ManagedByLabel] == instance.ManagedByValue && l[instance.InstanceLabel] == id
}

// existing reads the metadata of obj's name; nil when it does not exist.
func existing(ctx context.Context, c client.Client, obj client.Object) (*metav1.PartialObjectMetadata, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, key(obj), err)
	}
	return m, nil
}

// applyOwned applies obj unless an object of that name exists that the provider did not create
// for id. Such a Namespace is used as it is (not labelled, so never deleted); any other such
// object is a ResourceNotOwned input error naming it, and nothing is changed.
func applyOwned(ctx context.Context, c client.Client, obj client.Object, id, where string) error {
	cur, err := existing(ctx, c, obj)
	if err != nil {
		return err
	}
	if cur != nil && !ours(cur, id) {
		if _, isNS := obj.(*corev1.Namespace); isNS {
			return nil
		}
		return &inputError{reason: spv1alpha1.ReasonResourceNotOwned, msg: fmt.Sprintf(
			"%s %s exists in the %s and was not created by the provider for this instance (labels %s=%s, %s=%s missing); it is neither changed nor deleted: remove or rename it",
			obj.GetObjectKind().GroupVersionKind().Kind, key(obj), where, instance.ManagedByLabel, instance.ManagedByValue, instance.InstanceLabel, id)}
	}
	return apply(ctx, c, obj)
}

// removeOwned deletes obj only if the provider created it for id (checked on the live object, and
// the delete is preconditioned on its UID) and reports whether nothing of the provider's is left
// under that name. An object the provider did not create counts as gone and is kept.
func removeOwned(ctx context.Context, c client.Client, obj client.Object, id string) (bool, error) {
	cur, err := existing(ctx, c, obj)
	if err != nil {
		return false, err
	}
	if cur == nil || !ours(cur, id) {
		return true, nil
	}
	if cur.GetDeletionTimestamp() != nil {
		return false, nil
	}
	uid := cur.GetUID()
	if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return apierrors.IsNotFound(err), nil
		}
		return false, fmt.Errorf("deleting %T %s: %w", obj, key(obj), err)
	}
	return false, nil
}

// foreignObjects lists what namespace ns holds that keeps the provider from deleting it: every
// object without the provider's labels for id, except those in allowed (kind/name), objects
// already being deleted, and objects owned by another object listed in ns (they go with their
// owner, which is judged itself; an owner that is not there, or outside the namespace, owns
// nothing here). When the namespace's contents cannot be seen in full (a resource group whose
// discovery fails, a type that cannot be listed) it returns an error: nothing is deleted, and
// the deletion is not reported done, while part of the namespace is invisible.
func foreignObjects(ctx context.Context, cfg *rest.Config, ns, id string, allowed []string) ([]string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, fmt.Errorf("namespace %s is not deleted while its contents cannot all be seen: discovering its resource types: %w", ns, err)
	}
	type item struct {
		name string
		meta metav1.PartialObjectMetadata
	}
	var items []item
	present := map[types.UID]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: resource group %q: %w", ns, l.GroupVersion, err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			list, err := mc.Resource(gv.WithResource(r.Name)).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, fmt.Errorf("namespace %s is not deleted while its contents cannot all be seen: listing %s: %w", ns, gv.WithResource(r.Name), err)
			}
			for _, it := range list.Items {
				items = append(items, item{name: r.Kind + "/" + it.Name, meta: it})
				present[it.UID] = true
			}
		}
	}
	var out []string
	for _, it := range items {
		if ours(&it.meta, id) || slices.Contains(allowed, it.name) || it.meta.DeletionTimestamp != nil || ownedHere(&it.meta, present) {
			continue
		}
		out = append(out, it.name)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// ownedHere says whether o has an owner among the objects listed in its namespace (by UID, which
// an owner reference must match for the garbage collector to act on it).
func ownedHere(o metav1.Object, present map[types.UID]bool) bool {
	for _, ref := range o.GetOwnerReferences() {
		if present[ref.UID] {
			return true
		}
	}
	return false
}

// namespaceDefaults are created in every namespace by Kubernetes itself.
var namespaceDefaults = []string{"ServiceAccount/default", "ConfigMap/kube-root-ca.crt"}

// removeNamespace deletes namespace ns if the provider created it for id and it holds nothing the
// provider did not create (besides Kubernetes' own defaults, events and allowed). It reports
// whether the namespace is gone or kept, and why it was kept.
func removeNamespace(ctx context.Context, c client.Client, cfg *rest.Config, ns, id string, allowed ...string) (gone bool, kept string, err error) {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	cur, err := existing(ctx, c, obj)
	if err != nil || cur == nil {
		return cur == nil && err == nil, "", err
	}
	if !ours(cur, id) {
		return true, "", nil
	}
	if cur.GetDeletionTimestamp() != nil {
		return false, "", nil
	}
	foreign, err := foreignObjects(ctx, cfg, ns, id, append(slices.Clone(namespaceDefaults), allowed...))
	if err != nil {
		return false, "", err
	}
	var left []string
	for _, f := range foreign {
		if !strings.HasPrefix(f, "Event/") {
			left = append(left, f)
		}
	}
	if len(left) > 0 {
		if len(left) > 5 {
			left = append(left[:5], fmt.Sprintf("and %d more", len(left)-5))
		}
		return true, fmt.Sprintf("namespace %s kept: it holds objects the provider did not create: %s", ns, strings.Join(left, ", ")), nil
	}
	gone, err = removeOwned(ctx, c, obj, id)
	return gone, "", err
}
