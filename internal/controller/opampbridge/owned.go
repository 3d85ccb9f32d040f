package opampbridge

import (
	"context"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/controller/owned"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
)

// listOwned returns the generated objects whose controller owner is bridge.
func (r *Reconciler) listOwned(ctx context.Context, bridge *v1alpha1.OpAMPBridge) (apply.Objects, error) {
	return owned.List(ctx, r.Client, bridge, "OpAMPBridge", mbridge.Kinds)
}
