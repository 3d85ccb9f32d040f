package collector

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	"github.com/otelop/otelop/internal/upgrade"
)

// Preview is what one reconcile of a collector would do, computed with reads only: it backs
// `opentelemetry-operator render --diff`. It takes the steps Reconcile takes, with the same
// functions: the spec migrated from the live collector's status.version, built, owned as
// Reconcile owns it, and compared with the objects the collector owns by the rules that decide
// what Reconcile prunes (never an object it cannot prove it created).
type Preview struct {
	// Desired are the objects Reconcile would apply, in apply order, with their owners set.
	Desired []client.Object
	// Existing are the live objects the collector owns (metadata only for most kinds).
	Existing apply.Objects
	// Prune are the owned objects Reconcile would delete.
	Prune []client.Object
	// Upgrade are the migrations applied to a copy of the spec before the build.
	Upgrade []upgrade.Change
}

// PreviewReconcile computes the Preview of spec, the collector as it would be stored (converted
// and defaulted), over live, the stored collector (nil when it does not exist yet: the UID and
// status of live are what Reconcile would see). c reads the cluster (owned objects and, for a
// sidecar collector, the pods that mount its old ConfigMaps); it is only read from. build,
// caps and version are the operator's, as in Reconciler.
func PreviewReconcile(ctx context.Context, c client.Client, spec, live *v1beta1.OpenTelemetryCollector,
	build BuildFunc, caps autodetect.Capabilities, version string) (Preview, error) {
	otelcol := spec.DeepCopy()
	if live != nil {
		otelcol.UID = live.UID
		otelcol.Status = *live.Status.DeepCopy()
	}
	migrated, changes, _ := upgrade.Apply(*otelcol, otelcol.Status.Version, version)
	desired, err := build(&migrated, caps)
	if err != nil {
		return Preview{}, err
	}
	sortForApply(desired)
	setOwners(desired, otelcol)
	r := &Reconciler{Client: c, APIReader: c} // listOwned and staleObjects only read
	existing, err := r.listOwned(ctx, otelcol, caps)
	if err != nil {
		return Preview{}, err
	}
	stale, err := r.staleObjects(ctx, otelcol, desired, existing)
	if err != nil {
		return Preview{}, err
	}
	return Preview{Desired: desired, Existing: existing, Prune: stale, Upgrade: changes}, nil
}
