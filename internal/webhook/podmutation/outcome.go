package podmutation

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// MetricName is the webhook label of the pod webhook's admissionmetrics.
const MetricName = "pod"

// The reasons the pod webhook records with admissionmetrics (docs/metrics.md). They name a kind
// of decision, never an object, so that the label stays bounded.
const (
	reasonNotRequested     = "not_requested"
	reasonNotCreate        = "not_create"
	reasonAlreadyInjected  = "already_injected"
	reasonDisabled         = "language_disabled"
	reasonUnresolved       = "unresolved"
	reasonNamespaceMissing = "namespace_missing"
	reasonIncompatible     = "incompatible_pod"
	reasonConsent          = "no_consent"
	reasonGoNamespace      = "go_namespace_not_allowed"
	reasonAPI              = "api_error"
	reasonDecode           = "decode_error"
	reasonPatch            = "patch_error"
	reasonSidecar          = "sidecar_error"
	reasonSidecarRemoved   = "sidecar_removed"
)

// note records what the admission decided for one of the things the pod asked for; the
// admission's outcome is the most severe one noted (error, then refused, then skipped), with the
// first reason noted at that level.
func (r *podRequest) note(outcome admissionmetrics.Outcome, reason string) {
	if severity(outcome) > severity(r.outcome) {
		r.outcome, r.reason = outcome, reason
	}
}

func severity(o admissionmetrics.Outcome) int {
	switch o {
	case admissionmetrics.Error:
		return 3
	case admissionmetrics.Refused:
		return 2
	case admissionmetrics.Skipped:
		return 1
	}
	return 0
}

// result is the admission's outcome and reason: injected (with what) when the pod changed, else
// what was noted, else skipped because nothing was asked for. A pod whose only change is the
// removal of a sidecar it carried ("false") counts as skipped, reason sidecar_removed.
func (r *podRequest) result(sidecar, instrumented bool) (admissionmetrics.Outcome, string) {
	if sidecar && r.sidecarRemoved {
		if !instrumented {
			return admissionmetrics.Skipped, reasonSidecarRemoved
		}
		sidecar = false
	}
	switch {
	case sidecar && instrumented:
		return admissionmetrics.Injected, "sidecar_and_instrumentation"
	case sidecar:
		return admissionmetrics.Injected, "sidecar"
	case instrumented:
		return admissionmetrics.Injected, "instrumentation"
	case r.outcome != "":
		return r.outcome, r.reason
	}
	return admissionmetrics.Skipped, reasonNotRequested
}

// noteError notes why a requested sidecar or Instrumentation was not injected: err from mutate
// or resolve.
func (r *podRequest) noteError(err error) {
	var skip *skipError
	if errors.As(err, &skip) {
		r.note(skip.outcome(), skip.reasonOrDefault())
		return
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		r.note(admissionmetrics.Error, reasonAPI)
		return
	}
	r.note(admissionmetrics.Error, reasonSidecar)
}
