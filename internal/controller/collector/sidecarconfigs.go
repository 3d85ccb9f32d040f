package collector

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
)

// errNoPodReader: the reconciler has no APIReader to list pods with.
var errNoPodReader = errors.New("no API reader to list the pods with the sidecar")

// sidecarConfigMapsInUse returns the names of the ConfigMaps that pods carrying otelcol as their
// sidecar mount as their collector config (the otc-internal volume): a sidecar reads its config
// from the ConfigMap of the config version it was injected with, so an old ConfigMap is pruned
// only once no such pod is left (at a later reconcile). The pods are read uncached, by the
// injected label, a page of 500 at a time. Pods of other namespaces (allowed-namespaces) carry
// their config inline and are not looked for.
func (r *Reconciler) sidecarConfigMapsInUse(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector) (map[string]bool, error) {
	if r.APIReader == nil {
		// Nothing to list the pods with: every old ConfigMap counts as in use.
		return nil, errNoPodReader
	}
	inUse := map[string]bool{}
	opts := []client.ListOption{
		client.InNamespace(otelcol.Namespace),
		client.MatchingLabels{sidecar.InjectedLabel: sidecar.InjectedLabelValue(*otelcol)},
		client.Limit(500),
	}
	for {
		pods := &corev1.PodList{}
		if err := r.APIReader.List(ctx, pods, opts...); err != nil {
			return nil, fmt.Errorf("listing the pods with the sidecar: %w", err)
		}
		for _, p := range pods.Items {
			for _, v := range p.Spec.Volumes {
				if v.Name == naming.ConfigMapVolume && v.ConfigMap != nil {
					inUse[v.ConfigMap.Name] = true
				}
			}
		}
		if pods.Continue == "" {
			return inUse, nil
		}
		opts = append(opts[:3], client.Continue(pods.Continue))
	}
}
