// Package opampbridge is the OpAMPBridge admission webhook: it defaults what upstream defaults
// (upgradeStrategy automatic, one replica, ReportsStatus on) and rejects, with every problem at
// once and its field path, a bridge the bridge daemon would refuse to start with.
package opampbridge

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// Webhook paths, as upstream serves them (controller-runtime derives the same from the type).
const (
	MutatePath   = "/mutate-opentelemetry-io-v1alpha1-opampbridge"
	ValidatePath = "/validate-opentelemetry-io-v1alpha1-opampbridge"
)

// Options configure the OpAMPBridge webhooks. The zero value is upstream's behaviour.
type Options struct{}

// Webhook defaults and validates OpAMPBridges. Build it with New.
type Webhook struct {
	opts Options
}

var (
	_ admission.Defaulter[*v1alpha1.OpAMPBridge] = (*Webhook)(nil)
	_ admission.Validator[*v1alpha1.OpAMPBridge] = (*Webhook)(nil)
)

// New returns a Webhook with opts.
func New(opts Options) *Webhook { return &Webhook{opts: opts} }

// Setup registers the defaulting and validating webhooks on the manager's webhook server at
// MutatePath and ValidatePath (the scheme must know v1alpha1).
func Setup(mgr ctrl.Manager, opts Options) error {
	w := New(opts)
	return ctrl.NewWebhookManagedBy(mgr, &v1alpha1.OpAMPBridge{}).
		WithDefaulter(admissionmetrics.Defaulter("opampbridge-defaulting", w)).
		WithValidator(admissionmetrics.Validator("opampbridge-validation", w)).
		Complete()
}

// Default applies ApplyDefaults.
func (w *Webhook) Default(_ context.Context, bridge *v1alpha1.OpAMPBridge) error {
	ApplyDefaults(bridge)
	return nil
}

// ValidateCreate validates a new bridge.
func (w *Webhook) ValidateCreate(_ context.Context, bridge *v1alpha1.OpAMPBridge) (admission.Warnings, error) {
	if errs := ValidateName(bridge); len(errs) > 0 {
		return nil, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("OpAMPBridge").GroupKind(), bridge.Name, errs)
	}
	return w.validate(bridge)
}

// ValidateUpdate validates a changed bridge.
func (w *Webhook) ValidateUpdate(_ context.Context, _, bridge *v1alpha1.OpAMPBridge) (admission.Warnings, error) {
	return w.validate(bridge)
}

// ValidateDelete never blocks: a bridge that a newer operator considers invalid must still be
// deletable.
func (w *Webhook) ValidateDelete(context.Context, *v1alpha1.OpAMPBridge) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(bridge *v1alpha1.OpAMPBridge) (admission.Warnings, error) {
	errs, warnings := Validate(bridge)
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("OpAMPBridge").GroupKind(), bridge.Name, errs)
	}
	return warnings, nil
}
