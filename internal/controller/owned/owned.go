// Package owned lists and watches the objects a controller generates for one custom resource, the
// way the operator's cache holds them: full Deployments (their status is read), metadata only for
// every other kind, and only objects carrying the managed-by label. Syncer and
// NewControllerBuilder are the reconcile skeleton the OpAMPBridge and TargetAllocator controllers
// share: load -> (the caller builds) -> apply -> prune -> status only when it changed.
package owned

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// WatchObject is the object type the manager's cache holds for kind gvk: the full Deployment,
// metadata only for the rest (the same types in every controller, so informers are shared).
func WatchObject(gvk schema.GroupVersionKind) client.Object {
	if gvk.Kind == "Deployment" {
		return &appsv1.Deployment{}
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// ListObject returns an empty list matching WatchObject for kind gvk.
func ListObject(gvk schema.GroupVersionKind) client.ObjectList {
	if gvk.Kind == "Deployment" {
		return &appsv1.DeploymentList{}
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// List returns the objects of kinds in owner's namespace that carry our managed-by label and whose
// controller owner is owner (same UID and kind ownerKind). Nothing else is ever pruned.
func List(ctx context.Context, r client.Reader, owner client.Object, ownerKind string, kinds []schema.GroupVersionKind) (apply.Objects, error) {
	out := apply.Objects{}
	for _, gvk := range kinds {
		list := ListObject(gvk)
		if err := r.List(ctx, list, client.InNamespace(owner.GetNamespace()),
			client.MatchingLabels{manifestutils.LabelManagedBy: manifestutils.ManagedBy}); err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			o, ok := item.(client.Object)
			if !ok {
				continue
			}
			ref := metav1.GetControllerOfNoCopy(o)
			if ref == nil || ref.UID != owner.GetUID() || ref.Kind != ownerKind {
				continue
			}
			o.GetObjectKind().SetGroupVersionKind(gvk)
			out[apply.KeyOf(o)] = o
		}
	}
	return out, nil
}
