// Package admissionmetrics counts the operator's admission decisions by webhook and outcome and
// times them, on the manager's /metrics (controller-runtime's registry). controller-runtime's own
// controller_runtime_webhook_* metrics count HTTP requests by status code, which is 200 for an
// admitted pod, a refused collector and a pod admitted without the injection it asked for alike;
// these say which.
package admissionmetrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Outcome is what an admission decided.
type Outcome string

// The outcomes.
const (
	// Injected: the pod webhook added a sidecar or instrumentation (perhaps not all it was asked
	// for; warnings say what was left out).
	Injected Outcome = "injected"
	// Skipped: admitted unchanged, with the reason (nothing asked for, already injected, a
	// language switched off, a collector or Instrumentation that does not exist...).
	Skipped Outcome = "skipped"
	// Allowed: a defaulting or validating webhook admitted the object.
	Allowed Outcome = "allowed"
	// Refused: a validating webhook denied the object, or the pod webhook declined an injection
	// that policy does not allow (another namespace's consent, the Go agent's namespace opt-in).
	Refused Outcome = "refused"
	// Error: something failed (an API read, decoding, the patch); the pod is still admitted.
	Error Outcome = "error"
)

// Metric names, as documented in docs/metrics.md and used by config/prometheus.
const (
	AdmissionsName = "otelop_webhook_admissions_total"
	DurationName   = "otelop_webhook_admission_duration_seconds"
)

var (
	admissions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: AdmissionsName,
		Help: "Admission requests the operator's webhooks decided, by webhook, outcome (injected, skipped, allowed, refused, error) and reason.",
	}, []string{"webhook", "outcome", "reason"})
	duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: DurationName,
		Help: "Time the operator's webhooks took to decide an admission request (from the decoded request to the response), by webhook.",
		// 0.25 ms to ~4 s: a pod that asks for nothing takes well under a millisecond, the API
		// server's timeout is a few seconds.
		Buckets: prometheus.ExponentialBuckets(0.00025, 2, 15),
	}, []string{"webhook"})
)

func init() {
	metrics.Registry.MustRegister(admissions, duration)
}

// Record counts one admission of webhook with outcome and reason, and its duration since start.
// Reasons are a small fixed set per webhook (never object names or messages), so that the label
// stays bounded.
func Record(webhook string, outcome Outcome, reason string, start time.Time) {
	admissions.WithLabelValues(webhook, string(outcome), reason).Inc()
	duration.WithLabelValues(webhook).Observe(time.Since(start).Seconds())
}

// Defaulter wraps d so that each call is recorded as webhook: allowed, or error (reason
// "defaulting") when d fails.
func Defaulter[T runtime.Object](webhook string, d admission.Defaulter[T]) admission.Defaulter[T] {
	return defaulter[T]{name: webhook, next: d}
}

type defaulter[T runtime.Object] struct {
	name string
	next admission.Defaulter[T]
}

func (d defaulter[T]) Default(ctx context.Context, obj T) error {
	start := time.Now()
	err := d.next.Default(ctx, obj)
	if err != nil {
		Record(d.name, Error, "defaulting", start)
	} else {
		Record(d.name, Allowed, "", start)
	}
	return err
}

// Validator wraps v so that each call is recorded as webhook: allowed, refused (reason "invalid")
// when v returns a validation error, or error (reason "internal") when v returns a server error
// (an API status of 500 or more).
func Validator[T runtime.Object](webhook string, v admission.Validator[T]) admission.Validator[T] {
	return validator[T]{name: webhook, next: v}
}

type validator[T runtime.Object] struct {
	name string
	next admission.Validator[T]
}

func (v validator[T]) record(start time.Time, err error) {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		Record(v.name, Allowed, "", start)
	case errors.As(err, &status) && status.Status().Code >= 500:
		Record(v.name, Error, "internal", start)
	default:
		Record(v.name, Refused, "invalid", start)
	}
}

func (v validator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	start := time.Now()
	w, err := v.next.ValidateCreate(ctx, obj)
	v.record(start, err)
	return w, err
}

func (v validator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	start := time.Now()
	w, err := v.next.ValidateUpdate(ctx, oldObj, newObj)
	v.record(start, err)
	return w, err
}

func (v validator[T]) ValidateDelete(ctx context.Context, obj T) (admission.Warnings, error) {
	start := time.Now()
	w, err := v.next.ValidateDelete(ctx, obj)
	v.record(start, err)
	return w, err
}
