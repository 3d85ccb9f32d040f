// Package instrumentation is the Instrumentation admission webhook: it fills in what upstream's
// defaulting webhook fills in (the per-language images from the operator's flags, the injected
// containers' default resources, the default-auto-instrumentation-<lang>-image annotations and the
// web-server paths) and rejects, with every problem at once and its field path, an Instrumentation
// whose sampler, volumes or exporter TLS files cannot work. It also provides the startup pass that
// moves Instrumentations still on an older operator's default images to the current defaults.
package instrumentation

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
	MutatePath   = "/mutate-opentelemetry-io-v1alpha1-instrumentation"
	ValidatePath = "/validate-opentelemetry-io-v1alpha1-instrumentation"
)

// Options configure the Instrumentation webhooks and the image upgrade. The zero value is
// upstream's behaviour with upstream's default images.
type Options struct {
	// Images are the default images per language; empty fields take DefaultImages.
	Images Images
	// Enabled says, per Language.Name, whether the operator injects that language
	// (--enable-<lang>-instrumentation). The upgrade skips disabled languages, as upstream. A
	// language missing from the map takes Language.EnabledByDefault.
	Enabled map[string]bool
	// DisableUpgrade turns off the startup upgrade of default images.
	DisableUpgrade bool
}

func (o Options) enabled(l Language) bool {
	if on, ok := o.Enabled[l.Name]; ok {
		return on
	}
	return l.EnabledByDefault
}

// Webhook defaults and validates Instrumentations. Build it with New.
type Webhook struct {
	images Images
}

var (
	_ admission.Defaulter[*v1alpha1.Instrumentation] = (*Webhook)(nil)
	_ admission.Validator[*v1alpha1.Instrumentation] = (*Webhook)(nil)
)

// New returns a Webhook with opts.
func New(opts Options) *Webhook { return &Webhook{images: opts.Images.withDefaults()} }

// Setup registers the defaulting and validating webhooks on the manager's webhook server at
// MutatePath and ValidatePath (the scheme must know v1alpha1) and, unless opts.DisableUpgrade,
// adds the leader-elected startup pass that upgrades default images (see Upgrader).
func Setup(mgr ctrl.Manager, opts Options) error {
	w := New(opts)
	err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.Instrumentation{}).
		WithDefaulter(admissionmetrics.Defaulter("instrumentation-defaulting", w)).
		WithValidator(admissionmetrics.Validator("instrumentation-validation", w)).
		Complete()
	if err != nil || opts.DisableUpgrade {
		return err
	}
	return mgr.Add(&Upgrader{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("opentelemetry-operator"),
		Options:  opts,
	})
}

// Default applies ApplyDefaults with the operator's images.
func (w *Webhook) Default(_ context.Context, inst *v1alpha1.Instrumentation) error {
	ApplyDefaults(inst, w.images)
	return nil
}

// ValidateCreate validates a new Instrumentation.
func (w *Webhook) ValidateCreate(_ context.Context, inst *v1alpha1.Instrumentation) (admission.Warnings, error) {
	return validate(inst)
}

// ValidateUpdate validates a changed Instrumentation.
func (w *Webhook) ValidateUpdate(_ context.Context, _, inst *v1alpha1.Instrumentation) (admission.Warnings, error) {
	return validate(inst)
}

// ValidateDelete never blocks: an Instrumentation that a newer operator considers invalid must
// still be deletable (upstream validates deletes too).
func (w *Webhook) ValidateDelete(context.Context, *v1alpha1.Instrumentation) (admission.Warnings, error) {
	return nil, nil
}

func validate(inst *v1alpha1.Instrumentation) (admission.Warnings, error) {
	errs, warnings := Validate(inst)
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("Instrumentation").GroupKind(), inst.Name, errs)
	}
	return warnings, nil
}
