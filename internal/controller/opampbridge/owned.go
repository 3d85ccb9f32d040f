package opampbridge

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
)

// watchObject is the object type the manager's cache holds for kind gvk: the full Deployment, and
// metadata only for the rest (the same types as the collector controller, so informers are shared).
func watchObject(gvk schema.GroupVersionKind) client.Object {
	if gvk.Kind == "Deployment" {
		return &appsv1.Deployment{}
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

func listObject(gvk schema.GroupVersionKind) client.ObjectList {
	if gvk.Kind == "Deployment" {
		return &appsv1.DeploymentList{}
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// listOwned returns the objects of the generated kinds in the bridge's namespace that carry our
// managed-by label and whose controller owner is the bridge. Nothing else is ever pruned.
func (r *Reconciler) listOwned(ctx context.Context, bridge *v1alpha1.OpAMPBridge) (apply.Objects, error) {
	out := apply.Objects{}
	for _, gvk := range mbridge.Kinds {
		list := listObject(gvk)
		if err := r.Client.List(ctx, list, client.InNamespace(bridge.Namespace),
			client.MatchingLabels{manifestutils.LabelManagedBy: manifestutils.ManagedBy}); err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			o, ok := item.(client.Object)
			if !ok || !ownedBy(o, bridge) {
				continue
			}
			o.GetObjectKind().SetGroupVersionKind(gvk)
			out[apply.KeyOf(o)] = o
		}
	}
	return out, nil
}

func ownedBy(o client.Object, bridge *v1alpha1.OpAMPBridge) bool {
	ref := metav1.GetControllerOfNoCopy(o)
	return ref != nil && ref.UID == bridge.UID && ref.Kind == "OpAMPBridge"
}
