package collector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/naming"
)

// available reports whether kind k can be listed with the current capabilities.
func available(k ownedKind, caps autodetect.Capabilities) bool {
	switch k.capability {
	case CapPrometheus:
		return caps.Prometheus
	case CapGatewayAPI:
		return caps.GatewayAPI
	case CapRoutes:
		return caps.Routes
	}
	return true
}

// listOwned returns every object of the owned kinds that belongs to otelcol: namespaced objects by
// controller owner reference, cluster-scoped ones by their instance label.
func (r *Reconciler) listOwned(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, caps autodetect.Capabilities) (apply.Objects, error) {
	out := apply.Objects{}
	for _, k := range ownedKinds {
		if !available(k, caps) {
			continue
		}
		objs, err := r.listKind(ctx, k, otelcol)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			out[apply.KeyOf(o)] = o
		}
	}
	return out, nil
}

func (r *Reconciler) listKind(ctx context.Context, k ownedKind, otelcol *v1beta1.OpenTelemetryCollector) ([]client.Object, error) {
	list := k.listObject()
	opts := []client.ListOption{client.MatchingLabels{ManagedByLabel: ManagedByValue}}
	if k.clusterScoped {
		// The label is what upstream sets (truncated); ownership is decided by ownsClusterObject.
		opts = append(opts, client.MatchingLabels{ManagedByLabel: ManagedByValue, InstanceLabel: naming.Instance(otelcol.Namespace, otelcol.Name)})
	} else {
		opts = append(opts, client.InNamespace(otelcol.Namespace))
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing %s: %w", k.gvk.Kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok {
			continue
		}
		if k.clusterScoped && !ownsClusterObject(o, otelcol) || !k.clusterScoped && !ownedBy(o, otelcol) {
			continue
		}
		o.GetObjectKind().SetGroupVersionKind(k.gvk)
		out = append(out, o)
	}
	return out, nil
}

func ownedBy(o client.Object, otelcol *v1beta1.OpenTelemetryCollector) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == otelcol.UID && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

// prune deletes owned objects that are no longer desired, keeping the newest configVersions
// collector ConfigMaps besides the current one so that a rollback finds its config, and, for a
// sidecar collector, every older one that an injected pod still mounts.
func (r *Reconciler) prune(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, desired []client.Object, existing apply.Objects) (apply.ChangeSet, error) {
	stale, err := r.staleObjects(ctx, otelcol, desired, existing)
	if err != nil {
		return nil, err
	}
	return r.Applier.DeleteAll(ctx, stale)
}

// staleObjects returns the owned objects prune deletes (reads only).
func (r *Reconciler) staleObjects(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, desired []client.Object, existing apply.Objects) ([]client.Object, error) {
	var stale, oldConfigs []client.Object
	for _, o := range apply.Stale(desired, existing) {
		if isLastReadyRecord(o, otelcol) {
			continue // the automatic rollback's record (rollback.go), not a config version
		}
		if gvk := apply.KeyOf(o).GVK; gvk.Kind == "ConfigMap" && gvk.Group == "" {
			oldConfigs = append(oldConfigs, o)
			continue
		}
		stale = append(stale, o)
	}
	keep := 3
	if otelcol.Spec.ConfigVersions > 0 {
		keep = otelcol.Spec.ConfigVersions
	}
	sort.SliceStable(oldConfigs, func(i, j int) bool {
		ti, tj := oldConfigs[i].GetCreationTimestamp(), oldConfigs[j].GetCreationTimestamp()
		if ti.Equal(&tj) {
			return oldConfigs[i].GetName() > oldConfigs[j].GetName()
		}
		return tj.Before(&ti)
	})
	if len(oldConfigs) > keep {
		drop := oldConfigs[keep:]
		if otelcol.Spec.Mode == v1beta1.ModeSidecar {
			inUse, err := r.sidecarConfigMapsInUse(ctx, otelcol)
			switch {
			case errors.Is(err, errNoPodReader):
				drop = nil
			case err != nil:
				return nil, err
			default:
				drop = slices.DeleteFunc(slices.Clone(drop), func(o client.Object) bool { return inUse[o.GetName()] })
			}
		}
		stale = append(stale, drop...)
	}
	return stale, nil
}
