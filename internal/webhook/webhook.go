// Package webhook wires the operator's admission and conversion webhooks and their certificates
// into a controller-runtime manager: the OpenTelemetryCollector, OpAMPBridge and Instrumentation
// defaulters and validators, the pod mutation webhook, the v1alpha1 <-> v1beta1 conversion
// endpoint, and (with certs.ModeSelf) the self-managed CA and serving certificate.
package webhook

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	podinst "github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/certs"
	"github.com/otelop/otelop/internal/webhook/collector"
	"github.com/otelop/otelop/internal/webhook/instrumentation"
	"github.com/otelop/otelop/internal/webhook/opampbridge"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// Options configure Setup.
type Options struct {
	// Collector configures the OpenTelemetryCollector webhooks; set Collector.Manifests to the
	// builder options the reconciler uses. When Collector.Reviewer is nil, Setup uses the
	// manager's client for the SubjectAccessReviews (they are create-only, never cached).
	Collector collector.Options
	// DisablePrivilegeCheck turns off the SubjectAccessReview check (e.g. when the operator does
	// not create RBAC for collectors).
	DisablePrivilegeCheck bool
	// PodInstrumentation are the pod webhook's auto-instrumentation switches; nil means upstream's
	// defaults.
	PodInstrumentation *podinst.Options
	// Certs configures the webhook serving certificate. The zero value uses certs.ModeFiles:
	// certificates are expected in the webhook server's cert dir.
	Certs certs.Options
	// Instrumentation configures the Instrumentation webhooks (default images) and the startup
	// upgrade of default images.
	Instrumentation instrumentation.Options
	// RequirePodClientCert makes the pod webhook refuse callers without a verified client
	// certificate (the server must check them: ClientCA).
	RequirePodClientCert bool
}

// Setup registers every webhook on mgr's webhook server and, in self mode, provisions the serving
// certificate before returning (so the webhook server finds it when the manager starts) and adds
// a runnable that rotates it and keeps the CA bundle injected. Call it before mgr.Start; ctx
// bounds only the initial certificate provisioning.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := certs.Setup(ctx, mgr, opts.Certs); err != nil {
		return fmt.Errorf("webhook certificates: %w", err)
	}
	col := opts.Collector
	if col.Reviewer == nil && !opts.DisablePrivilegeCheck {
		col.Reviewer = mgr.GetClient()
	}
	if opts.DisablePrivilegeCheck {
		col.Reviewer = nil
	}
	if err := collector.Setup(mgr, col); err != nil {
		return fmt.Errorf("collector webhooks: %w", err)
	}
	if err := opampbridge.Setup(mgr, opampbridge.Options{}); err != nil {
		return fmt.Errorf("opampbridge webhooks: %w", err)
	}
	if err := instrumentation.Setup(mgr, opts.Instrumentation); err != nil {
		return fmt.Errorf("instrumentation webhooks: %w", err)
	}
	if err := podmutation.Setup(mgr, podmutation.Options{Manifests: opts.Collector.Manifests, Instrumentation: opts.PodInstrumentation,
		RequireClientCert: opts.RequirePodClientCert}); err != nil {
		return fmt.Errorf("pod webhook: %w", err)
	}
	return nil
}
