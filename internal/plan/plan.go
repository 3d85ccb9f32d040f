// Package plan computes what the operator would do to a live cluster for a collector spec, before
// it is applied: the objects it would create, change (field by field) and prune, and which
// workloads' pods would roll and why. It backs `opentelemetry-operator render --diff` and only
// reads from the cluster.
//
// The desired objects come from the builders the controller uses, through
// collectorctrl.PreviewReconcile (the same migration, ownership and pruning rules), and each
// is compared with its live counterpart by the applier's own decision (apply.Applier.Drift):
// a field the API server defaulted or another manager set is no difference, and an object
// the applier would not write to is unchanged.
package plan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
	"github.com/otelop/otelop/internal/manifests/collector"
)

// Action is what an apply would do to one object.
type Action string

// The actions.
const (
	Create    Action = "create"
	Update    Action = "update"
	Recreate  Action = "recreate" // an immutable field changes: deleted and created again
	Delete    Action = "delete"   // pruned: owned by the collector and no longer generated
	Unchanged Action = "unchanged"
)

// Object is the plan for one object.
type Object struct {
	Action     Action `json:"action"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Changes are the fields an update or a recreate changes (Secrets' values redacted).
	Changes []apply.FieldChange `json:"changes,omitempty"`
	// Rollout says, for a Deployment, DaemonSet or StatefulSet, whether its pods are replaced.
	Rollout *Rollout `json:"rollout,omitempty"`
}

// Collector is the plan of one collector.
type Collector struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Exists: the collector is stored in the cluster (otherwise every object is created).
	Exists bool `json:"exists"`
	// Unmanaged: spec.managementState is unmanaged; the operator leaves its objects alone.
	Unmanaged bool     `json:"unmanaged,omitempty"`
	Objects   []Object `json:"objects"`
	// Notes are what the reader should know: migrations applied before the build, guesses.
	Notes []string `json:"notes,omitempty"`
}

// Changed reports whether anything of c would change.
func (c Collector) Changed() bool {
	for _, o := range c.Objects {
		if o.Action != Unchanged {
			return true
		}
	}
	return false
}

// Plan is the plan for every collector of an input.
type Plan struct {
	// Changes: something would change (render --diff exits with 2).
	Changes    bool        `json:"changes"`
	Collectors []Collector `json:"collectors"`
}

// ConflictError is a desired object that exists and belongs to someone else: the operator would
// not take it over, and the collector would be Stalled (OwnershipConflict).
type ConflictError struct{ Kind, Namespace, Name, Owner string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s/%s exists and is not this collector's (%s); the operator would not take it over "+
		"and the collector would be Stalled with reason OwnershipConflict", e.Kind, e.Namespace, e.Name, e.Owner)
}

// ForCollector plans spec, a collector as it would be stored (converted, defaulted and
// validated), against the cluster c reads. opts are the operator's builder options, with the
// capabilities of the cluster.
func ForCollector(ctx context.Context, c client.Client, spec *v1beta1.OpenTelemetryCollector, opts collector.Options) (Collector, error) {
	out := Collector{Namespace: spec.Namespace, Name: spec.Name}
	live := &v1beta1.OpenTelemetryCollector{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(spec), live); {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return out, fmt.Errorf("reading OpenTelemetryCollector %s/%s: %w", spec.Namespace, spec.Name, err)
	default:
		out.Exists = true
	}
	if spec.Spec.ManagementState == v1beta1.ManagementStateUnmanaged {
		out.Unmanaged = true
		return out, nil
	}
	caps := autodetect.Capabilities{Prometheus: opts.PrometheusCRDs, GatewayAPI: opts.GatewayAPI, Routes: opts.OpenShiftRoutes, CertManager: opts.CertManager}
	build := func(o *v1beta1.OpenTelemetryCollector, _ autodetect.Capabilities) ([]client.Object, error) {
		return collector.Build(*o, opts)
	}
	preview, err := collectorctrl.PreviewReconcile(ctx, c, spec, live, build, caps, opts.CollectorVersion)
	if err != nil {
		return out, err
	}
	for _, ch := range preview.Upgrade {
		out.Notes = append(out.Notes, "migrated before the build (the stored spec is not rewritten): "+ch.String())
	}
	applier := apply.New(c, collectorctrl.FieldOwner) // Drift only: nothing is written through it
	for _, d := range preview.Desired {
		o, err := planObject(ctx, c, applier, d, preview.Existing[apply.KeyOf(d)])
		if err != nil {
			return out, err
		}
		out.Objects = append(out.Objects, o)
	}
	for _, p := range preview.Prune {
		gvk := p.GetObjectKind().GroupVersionKind()
		o := Object{Action: Delete, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: p.GetNamespace(), Name: p.GetName()}
		if isWorkload(gvk) {
			o.Rollout = &Rollout{Reasons: []string{"deleted"}}
		}
		out.Objects = append(out.Objects, o)
	}
	return out, nil
}

// planObject compares one desired object with its live counterpart (owned, nil when the
// collector owns none under its name: it is then looked up, as the applier's create would find it).
func planObject(ctx context.Context, c client.Client, applier *apply.Applier, desired, owned client.Object) (Object, error) {
	gvk := desired.GetObjectKind().GroupVersionKind()
	o := Object{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: desired.GetNamespace(), Name: desired.GetName()}
	live, err := apply.FullObject(ctx, c, desired)
	switch {
	case apierrors.IsNotFound(err):
		o.Action = Create
		return o, nil
	case err != nil:
		return o, fmt.Errorf("reading %s %s: %w", gvk.Kind, desired.GetName(), err)
	}
	if owned == nil && !collectorctrl.Adoptable(desired, live) {
		return o, &ConflictError{Kind: gvk.Kind, Namespace: desired.GetNamespace(), Name: desired.GetName(), Owner: ownerOf(live)}
	}
	changes, err := applier.Drift(ctx, desired, live)
	if err != nil {
		return o, err
	}
	changes = withoutKept(gvk, changes)
	o.Action = Unchanged
	if len(changes) > 0 {
		o.Action = Update
		if immutableChange(gvk, changes) {
			o.Action = Recreate
		}
	}
	if gvk.Kind == "Secret" && gvk.Group == "" {
		redact(changes)
	}
	o.Changes = changes
	if isWorkload(gvk) && o.Action != Unchanged {
		o.Rollout = rolloutOf(o.Action, changes)
	}
	return o, nil
}

func ownerOf(o client.Object) string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return "controlled by " + ref.Kind + " " + ref.Name
		}
	}
	if owner := o.GetAnnotations()[apply.OwnerAnnotation]; owner != "" {
		return "owned by " + owner
	}
	return "no owner this operator recognises"
}

// redact hides Secret values: a change of data or stringData says only that the value changes.
func redact(changes []apply.FieldChange) {
	for i := range changes {
		ch := &changes[i]
		if !hasPrefix(ch.Path, "data") && !hasPrefix(ch.Path, "stringData") {
			continue
		}
		if ch.Old != nil {
			ch.Old = "(redacted)"
		}
		if ch.New != nil {
			ch.New = "(redacted)"
		}
	}
}

// hasPrefix reports whether path is field or below it.
func hasPrefix(path, field string) bool {
	if len(path) < len(field) || path[:len(field)] != field {
		return false
	}
	return len(path) == len(field) || path[len(field)] == '.' || path[len(field)] == '['
}

// keptWhenDropped are fields an apply that no longer sets them does not change, by kind: the
// API server keeps a Service's allocated values (cluster IPs, IP families and their policy)
// from the stored object, and defaults the others again (to the value given; nil: any value is
// kept). Our field manager can own them without having set them (a create's defaulted fields,
// converted into the apply entry), so their "removal" is no change.
var keptWhenDropped = map[string]map[string]any{
	"Service": {
		"spec.clusterIP": nil, "spec.clusterIPs": nil, "spec.ipFamilies": nil, "spec.ipFamilyPolicy": nil,
		"spec.internalTrafficPolicy": "Cluster", "spec.sessionAffinity": "None", "spec.type": "ClusterIP",
	},
}

func withoutKept(gvk schema.GroupVersionKind, changes []apply.FieldChange) []apply.FieldChange {
	kept, ok := keptWhenDropped[gvk.Kind]
	if !ok || gvk.Group != "" {
		return changes
	}
	out := changes[:0]
	for _, ch := range changes {
		if def, listed := kept[ch.Path]; ch.Removed && listed && (def == nil || def == ch.Old) {
			continue
		}
		out = append(out, ch)
	}
	return out
}
