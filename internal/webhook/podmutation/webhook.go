// Package podmutation is the pod mutating webhook (/mutate-v1-pod): it injects an
// OpenTelemetryCollector as a sidecar into pods that ask for one with the
// sidecar.opentelemetry.io/inject annotation, then auto-instrumentation for the
// instrumentation.opentelemetry.io/inject-<language> annotations, on the pod or its namespace
// (upstream's order).
//
// It never blocks a pod: whatever goes wrong (an unknown or ambiguous collector or
// Instrumentation, an API error, a disabled language, a container name that does not exist), the
// pod is admitted without that injection, with a warning the client sees, a log line and, for
// instrumentation, a Warning Event on the pod's workload (not for a dry run, and only when the
// workload the review names exists with the UID it claims: anyone who reaches the webhook port
// can post a review).
//
// It is built for latency. Namespaces come from a metadata-only informer and collectors and
// Instrumentations from the manager's cache, so a pod that asks for nothing costs no request to
// the API server. The pod's ReplicaSet or Job is read (as metadata) only when an injection needs
// the owner chain, at most once per admission and, through a one-minute cache by UID, about once
// per rollout.
package podmutation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/inject"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/sidecar"
	"github.com/otelop/otelop/internal/upgrade"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// Path is where the webhook is served, as upstream serves it.
const Path = "/mutate-v1-pod"

// Options configure the pod webhook.
type Options struct {
	// Manifests are the collector builder options the reconciler uses; NativeSidecars decides
	// whether otc-container becomes an init container with restartPolicy Always (Kubernetes 1.29+)
	// or a regular container.
	Manifests collector.Options
	// Collectors reads OpenTelemetryCollectors and Instrumentations. Nil means the manager's
	// (cached) client.
	Collectors client.Reader
	// Namespaces reads Namespace metadata (NamespaceMetadata objects). Nil means the manager's
	// cache, whose Namespace metadata informer Setup registers.
	Namespaces client.Reader
	// APIReader reads ReplicaSet and Job metadata without a cache, and Namespaces or
	// Instrumentations the cache does not have yet. Nil means the manager's API reader.
	APIReader client.Reader
	// Instrumentation are the operator's auto-instrumentation switches; nil means upstream's
	// defaults (instrumentation.DefaultOptions).
	Instrumentation *instrumentation.Options
	// Recorder receives the Warning Events about injections not done. Nil means the manager's
	// recorder for opentelemetry-operator; New leaves it nil (no Events).
	Recorder recorder.EventRecorder
	// RequireClientCert makes Setup serve Path only to callers whose TLS client certificate the
	// webhook server verified (webhook.ClientCA): the API server, when its admission
	// configuration gives it one. Anyone else gets 403 and nothing is read for them.
	RequireClientCert bool
}

// Handler is the admission handler of Path. Build it with New or register it with Setup.
type Handler struct {
	opts            Options
	instrumentation instrumentation.Options
	decoder         admission.Decoder
	owners          *ownerCache
}

var _ admission.Handler = (*Handler)(nil)

// New returns a Handler; opts.Collectors and opts.APIReader must be set. Without
// opts.Namespaces, namespaces are read through opts.APIReader.
func New(opts Options, decoder admission.Decoder) (*Handler, error) {
	if opts.Collectors == nil || opts.APIReader == nil {
		return nil, errors.New("podmutation: Options.Collectors and Options.APIReader are required")
	}
	if opts.Namespaces == nil {
		opts.Namespaces = opts.APIReader
	}
	inst := instrumentation.DefaultOptions()
	if opts.Instrumentation != nil {
		inst = *opts.Instrumentation
	}
	return &Handler{opts: opts, instrumentation: inst, decoder: decoder, owners: newOwnerCache(time.Minute)}, nil
}

// Setup registers the handler on mgr's webhook server at Path, with the manager's client, cache,
// API reader and Event recorder where opts leaves them nil, and registers the Namespace metadata
// informer so that it starts (and syncs) with the manager.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Collectors == nil {
		opts.Collectors = mgr.GetClient()
	}
	if opts.APIReader == nil {
		opts.APIReader = mgr.GetAPIReader()
	}
	if opts.Namespaces == nil {
		if _, err := mgr.GetCache().GetInformer(context.Background(), NamespaceMetadata(), cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("podmutation: namespace informer: %w", err)
		}
		opts.Namespaces = mgr.GetCache()
	}
	if opts.Recorder == nil {
		opts.Recorder = mgr.GetEventRecorder("opentelemetry-operator")
	}
	h, err := New(opts, admission.NewDecoder(mgr.GetScheme()))
	if err != nil {
		return err
	}
	var handler http.Handler = &webhook.Admission{Handler: h}
	if opts.RequireClientCert {
		handler = RequireClientCert(handler)
	}
	mgr.GetWebhookServer().Register(Path, handler)
	return nil
}

// RequireClientCert serves next only to requests over TLS whose client certificate the server
// verified; others get 403 Forbidden.
func RequireClientCert(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "a client certificate signed by the webhook's client CA is required", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Handle admits every pod; a pod that asks for a sidecar or instrumentation it can get is
// admitted with a patch that adds it.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	start := time.Now()
	if req.Operation != admissionv1.Create {
		admissionmetrics.Record(MetricName, admissionmetrics.Skipped, reasonNotCreate, start)
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		logf.FromContext(ctx).Error(err, "decoding the pod; admitted unchanged", "namespace", req.Namespace)
		admissionmetrics.Record(MetricName, admissionmetrics.Error, reasonDecode, start)
		return admission.Allowed("").WithWarnings("injection skipped: cannot decode the pod: " + err.Error())
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	log := logf.FromContext(ctx).WithValues("namespace", req.Namespace, "pod", podName(pod))
	ctx = logf.IntoContext(ctx, log)
	r := &podRequest{h: h, ctx: ctx, pod: pod}
	changed, warnings, err := h.mutate(r)
	if err != nil {
		r.noteError(err)
		var skip *skipError
		if errors.As(err, &skip) {
			log.Info("sidecar not injected", "reason", err.Error())
		} else {
			log.Error(err, "sidecar not injected")
		}
		warnings = append(warnings, "sidecar not injected: "+err.Error())
	}
	instrumented, iwarnings := h.instrument(r)
	if len(iwarnings) > 0 {
		log.Info("instrumentation not (fully) injected", "reasons", iwarnings)
		if req.DryRun == nil || !*req.DryRun {
			// A dry run has no side effects (the webhook is registered with sideEffects None).
			h.event(r, iwarnings)
		}
	}
	warnings = append(warnings, iwarnings...)
	if !changed && !instrumented {
		outcome, reason := r.result(false, false)
		admissionmetrics.Record(MetricName, outcome, reason, start)
		return admission.Allowed("").WithWarnings(warnings...)
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		log.Error(err, "encoding the mutated pod; admitted unchanged")
		admissionmetrics.Record(MetricName, admissionmetrics.Error, reasonPatch, start)
		return admission.Allowed("").WithWarnings("injection skipped: " + err.Error())
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, raw)
	if !resp.Allowed {
		msg := "computing the patch"
		if resp.Result != nil {
			msg = resp.Result.Message
		}
		log.Error(errors.New(msg), "patching the pod; admitted unchanged")
		admissionmetrics.Record(MetricName, admissionmetrics.Error, reasonPatch, start)
		return admission.Allowed("").WithWarnings("injection skipped: " + msg)
	}
	outcome, reason := r.result(changed, instrumented)
	admissionmetrics.Record(MetricName, outcome, reason, start)
	log.V(1).Info("pod mutated", "sidecar", pod.Labels[sidecar.InjectedLabel], "instrumentation", pod.Annotations[instrumentation.InjectedAnnotation])
	return resp.WithWarnings(warnings...)
}

// skipError is a decision not to inject (nothing to pick, a collector not in sidecar mode, no
// consent), as opposed to a failure. reason is its admissionmetrics reason (reasonUnresolved when
// empty); refused marks a decision of policy.
type skipError struct {
	err     error
	reason  string
	refused bool
}

func (e *skipError) Error() string { return e.err.Error() }
func (e *skipError) Unwrap() error { return e.err }

func (e *skipError) outcome() admissionmetrics.Outcome {
	if e.refused {
		return admissionmetrics.Refused
	}
	return admissionmetrics.Skipped
}

func (e *skipError) reasonOrDefault() string {
	if e.reason == "" {
		return reasonUnresolved
	}
	return e.reason
}

func skip(err error) error { return &skipError{err: err} }

// skipFor is skip with an admissionmetrics reason.
func skipFor(reason string, err error) error { return &skipError{err: err, reason: reason} }

// refuse is a decision of policy not to inject (no consent).
func refuse(reason string, err error) error {
	return &skipError{err: err, reason: reason, refused: true}
}

// mutate applies the sidecar annotation to the request's pod. It reports whether the pod
// changed, the warnings for the client, and why a requested sidecar was not injected.
func (h *Handler) mutate(r *podRequest) (bool, []string, error) {
	pod := r.pod
	podValue := pod.Annotations[Annotation]
	nsValue := ""
	if inject.NeedsNamespace(podValue) {
		ns, err := r.namespace()
		if err != nil {
			if podValue == "" {
				// Without the namespace nothing says the pod wants a sidecar: no warning.
				logf.FromContext(r.ctx).Error(err, "reading the namespace's annotations; no sidecar")
				r.note(admissionmetrics.Error, reasonAPI)
				return false, nil, nil
			}
			return false, nil, err
		}
		nsValue = ns.Annotations[Annotation]
	}
	value := inject.Resolve(podValue, nsValue)
	switch {
	case value == "":
		return false, nil, nil
	case inject.IsFalse(value):
		r.sidecarRemoved = Remove(pod, h.opts.Manifests.NativeSidecars)
		return r.sidecarRemoved, nil, nil
	case HasSidecar(pod):
		r.note(admissionmetrics.Skipped, reasonAlreadyInjected)
		return false, nil, nil
	}
	// The pod's namespace must exist (from the cache; one read when the cache does not have it):
	// a review posted straight to the webhook port may claim any namespace, and a collector that
	// allows "*" must not serve a namespace that is not there.
	if _, err := r.namespace(); err != nil {
		return false, nil, skipFor(reasonNamespaceMissing, err)
	}
	otelcol, err := h.collector(r.ctx, value, pod.Namespace)
	if err != nil {
		return false, nil, err
	}
	// The reconciler builds the collector's ConfigMap from the migrated spec (internal/upgrade); the
	// sidecar names that ConfigMap, so it is built from the same copy.
	migrated, _, _ := upgrade.Apply(*otelcol, otelcol.Status.Version, h.opts.Manifests.CollectorVersion)
	warnings, err := Inject(pod, migrated, h.opts.Manifests, r.sidecarOwners())
	return err == nil, warnings, err
}

// collector returns the collector value designates.
func (h *Handler) collector(ctx context.Context, value, namespace string) (*v1beta1.OpenTelemetryCollector, error) {
	if inject.IsTrue(value) {
		list := &v1beta1.OpenTelemetryCollectorList{}
		if err := h.opts.Collectors.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("listing the OpenTelemetryCollectors of namespace %q: %w", namespace, err)
		}
		otelcol, err := pickSidecar(list.Items, namespace)
		if err != nil {
			return nil, skip(err)
		}
		return otelcol, nil
	}
	key, err := Target(value, namespace)
	if err != nil {
		return nil, skip(err)
	}
	otelcol := &v1beta1.OpenTelemetryCollector{}
	if err := h.opts.Collectors.Get(ctx, key, otelcol); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, skip(fmt.Errorf("%s=%q: OpenTelemetryCollector %s not found", Annotation, value, key))
		}
		return nil, fmt.Errorf("reading OpenTelemetryCollector %s: %w", key, err)
	}
	if otelcol.Spec.Mode != v1beta1.ModeSidecar {
		return nil, skip(fmt.Errorf("%s=%q: OpenTelemetryCollector %s is in %s mode, not sidecar", Annotation, value, key, otelcol.Spec.Mode))
	}
	if !allowsNamespace(otelcol, namespace) {
		return nil, refuse(reasonConsent, fmt.Errorf("%s=%q: OpenTelemetryCollector %s does not allow pods of namespace %q (its %s annotation must list the namespace or \"*\")",
			Annotation, value, key, namespace, AllowedNamespacesAnnotation))
	}
	return otelcol, nil
}

// ownerOfKind returns the controller reference of kind, else the first reference of kind.
func ownerOfKind(refs []metav1.OwnerReference, kind string) *metav1.OwnerReference {
	var first *metav1.OwnerReference
	for i := range refs {
		if refs[i].Kind != kind {
			continue
		}
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
		if first == nil {
			first = &refs[i]
		}
	}
	return first
}

func podName(pod *corev1.Pod) string {
	if pod.Name == "" && pod.GenerateName != "" {
		return pod.GenerateName + "*"
	}
	return pod.Name
}
