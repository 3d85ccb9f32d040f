package collector

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// Webhook paths, as upstream serves them (controller-runtime derives the same from the type).
const (
	MutatePath   = "/mutate-opentelemetry-io-v1beta1-opentelemetrycollector"
	ValidatePath = "/validate-opentelemetry-io-v1beta1-opentelemetrycollector"
)

// maxListed bounds how many missing permissions an error message names.
const maxListed = 10

// Options configure the collector webhooks.
type Options struct {
	// Manifests are the builders' operator-wide options (images, capabilities, feature gates),
	// the same the reconciler builds with: defaulting and validation run the builders with them.
	Manifests mcollector.Options
	// FIPSDisabledComponents are "<kind>.<type>" components rejected on a FIPS platform.
	FIPSDisabledComponents []string
	// Reviewer creates SubjectAccessReviews for the privilege-escalation check, which runs when
	// it is set and Manifests.CreateRBAC is true (the operator then grants the collector's
	// ServiceAccount a ClusterRole).
	Reviewer client.Client
}

// Webhook defaults and validates v1beta1 OpenTelemetryCollectors. Build it with New.
type Webhook struct {
	opts Options
}

var (
	_ admission.Defaulter[*v1beta1.OpenTelemetryCollector] = (*Webhook)(nil)
	_ admission.Validator[*v1beta1.OpenTelemetryCollector] = (*Webhook)(nil)
)

// New returns a Webhook with opts.
func New(opts Options) *Webhook {
	return &Webhook{opts: opts}
}

// Setup registers the defaulting and validating webhooks on the manager's webhook server at
// MutatePath and ValidatePath, and the /convert endpoint for v1alpha1 <-> v1beta1 (the scheme
// must know both versions).
func Setup(mgr ctrl.Manager, opts Options) error {
	w := New(opts)
	return ctrl.NewWebhookManagedBy(mgr, &v1beta1.OpenTelemetryCollector{}).
		WithDefaulter(admissionmetrics.Defaulter("collector-defaulting", w)).
		WithValidator(admissionmetrics.Validator("collector-validation", w)).
		Complete()
}

// Default applies ApplyDefaults with the webhook's options. A collector being deleted is left as
// it is: the update that removes its finalizer must not depend on defaulting succeeding. So is a
// collector whose v1alpha1 configuration does not parse (v1alpha1.UnparsedConfig): defaults would
// fill its empty spec.config, and validation refuses it anyway unless only its metadata changes.
func (w *Webhook) Default(_ context.Context, otelcol *v1beta1.OpenTelemetryCollector) error {
	if !otelcol.DeletionTimestamp.IsZero() || v1alpha1.UnparsedConfig(otelcol) != nil {
		return nil
	}
	return ApplyDefaults(otelcol, w.opts.Manifests)
}

// ValidateCreate validates a new collector.
func (w *Webhook) ValidateCreate(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector) (admission.Warnings, error) {
	return w.validate(ctx, otelcol, nil)
}

// ValidateUpdate validates a changed collector; the mode may not change. Updates of a collector
// being deleted, and updates that leave the spec as stored (labels, annotations, finalizers,
// owner references), are not validated: a collector stored by an older or upstream operator that
// today's rules reject must still be able to lose its finalizer (or it would block the deletion of
// its namespace), and metadata changes cannot make the spec any worse than it already is.
func (w *Webhook) ValidateUpdate(ctx context.Context, old, otelcol *v1beta1.OpenTelemetryCollector) (admission.Warnings, error) {
	if !otelcol.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	if old != nil && equality.Semantic.DeepEqual(old.Spec, otelcol.Spec) {
		return nil, nil
	}
	return w.validate(ctx, otelcol, old)
}

// ValidateDelete never blocks: a collector that a newer operator considers invalid must still be
// deletable.
func (w *Webhook) ValidateDelete(context.Context, *v1beta1.OpenTelemetryCollector) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(ctx context.Context, otelcol, old *v1beta1.OpenTelemetryCollector) (admission.Warnings, error) {
	errs, warnings := Validate(otelcol, old, ValidateOptions{Manifests: w.opts.Manifests, FIPSDisabledComponents: w.opts.FIPSDisabledComponents})
	if w.opts.Reviewer != nil && w.opts.Manifests.CreateRBAC {
		rbacErrs, err := w.checkEscalation(ctx, otelcol, old)
		if err != nil {
			return warnings, err
		}
		errs = append(errs, rbacErrs...)
	}
	if w.opts.Reviewer != nil && otelcol.Spec.TargetAllocator.Enabled && otelcol.Spec.TargetAllocator.PrometheusCR.Enabled {
		taWarnings, err := w.checkPrometheusCRAccess(ctx, otelcol)
		if err != nil {
			return warnings, err
		}
		warnings = append(warnings, taWarnings...)
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(v1beta1.GroupVersion.WithKind("OpenTelemetryCollector").GroupKind(), otelcol.Name, errs)
	}
	return warnings, nil
}

// checkEscalation rejects a collector whose generated ClusterRole would grant its ServiceAccount
// permissions that the requesting user does not hold; on update only permissions added since the
// stored version count. Without it, anyone allowed to create a collector could obtain, through the
// collector's ServiceAccount, read access to every pod, node or secret in the cluster.
func (w *Webhook) checkEscalation(ctx context.Context, otelcol, old *v1beta1.OpenTelemetryCollector) (field.ErrorList, error) {
	want := rbacRules(otelcol)
	if len(want) == 0 {
		return nil, nil
	}
	var have []rbacv1.PolicyRule
	if old != nil {
		have = rbacRules(old)
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("privilege check: no admission request in context: %w", err)
	}
	missing, err := missingAccess(ctx, w.opts.Reviewer, req.UserInfo, want, have)
	var tooMany tooManyReviewsError
	if errors.As(err, &tooMany) {
		return field.ErrorList{field.Forbidden(configPath, tooMany.Error())}, nil
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(configPath,
		fmt.Sprintf("the components in this config need the operator to grant the collector's ServiceAccount cluster permissions that user %q does not hold: %s; "+
			"ask an administrator to grant them to you or to create this collector", req.UserInfo.Username, joinLimited(missing, maxListed)))}, nil
}

// checkPrometheusCRAccess warns, as upstream does, when the target allocator's ServiceAccount
// cannot read the Prometheus CRs and the objects they point at.
func (w *Webhook) checkPrometheusCRAccess(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector) ([]string, error) {
	sa := targetAllocatorServiceAccount(otelcol)
	missing, err := missingAccess(ctx, w.opts.Reviewer, serviceAccountUser(otelcol.Namespace, sa), prometheusCRRules, nil)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("spec.targetAllocator.prometheusCR: ServiceAccount %s/%s cannot %s; the target allocator will not discover targets from ServiceMonitors and PodMonitors until it can",
		otelcol.Namespace, sa, joinLimited(missing, maxListed))}, nil
}

func rbacRules(otelcol *v1beta1.OpenTelemetryCollector) []rbacv1.PolicyRule {
	return collectorconfig.RBACRules(collectorconfig.Parse(mcollector.RawConfig(otelcol.Spec.Config)))
}
