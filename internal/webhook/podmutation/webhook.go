// Package podmutation is the pod mutating webhook (/mutate-v1-pod): it injects an
// OpenTelemetryCollector as a sidecar into pods that ask for one with the
// sidecar.opentelemetry.io/inject annotation, on the pod or its namespace.
//
// It never blocks a pod: whatever goes wrong (an unknown or ambiguous collector, an API error, a
// collector whose config does not build), the pod is admitted unchanged with a warning the client
// sees and a log line. It reads namespaces and the pod's ReplicaSet uncached and as metadata only,
// so it starts no cluster-wide informer of Namespaces, Pods or ReplicaSets; collectors come from
// the manager's cache, which watches them anyway.
package podmutation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/inject"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/sidecar"
)

// Path is where the webhook is served, as upstream serves it.
const Path = "/mutate-v1-pod"

// Options configure the pod webhook.
type Options struct {
	// Manifests are the collector builder options the reconciler uses; NativeSidecars decides
	// whether otc-container becomes an init container with restartPolicy Always (Kubernetes 1.29+)
	// or a regular container.
	Manifests collector.Options
	// Collectors reads OpenTelemetryCollectors. Nil means the manager's (cached) client.
	Collectors client.Reader
	// APIReader reads Namespace and ReplicaSet metadata without a cache. Nil means the manager's
	// API reader.
	APIReader client.Reader
}

// Handler is the admission handler of Path. Build it with New or register it with Setup.
type Handler struct {
	opts    Options
	decoder admission.Decoder
}

var _ admission.Handler = (*Handler)(nil)

// New returns a Handler; opts.Collectors and opts.APIReader must be set.
func New(opts Options, decoder admission.Decoder) (*Handler, error) {
	if opts.Collectors == nil || opts.APIReader == nil {
		return nil, errors.New("podmutation: Options.Collectors and Options.APIReader are required")
	}
	return &Handler{opts: opts, decoder: decoder}, nil
}

// Setup registers the handler on mgr's webhook server at Path, with the manager's client and API
// reader where opts leaves them nil.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Collectors == nil {
		opts.Collectors = mgr.GetClient()
	}
	if opts.APIReader == nil {
		opts.APIReader = mgr.GetAPIReader()
	}
	h, err := New(opts, admission.NewDecoder(mgr.GetScheme()))
	if err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(Path, &webhook.Admission{Handler: h})
	return nil
}

// Handle admits every pod; a pod that asks for a sidecar it can get is admitted with a patch
// that adds it.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		logf.FromContext(ctx).Error(err, "decoding the pod; admitted unchanged", "namespace", req.Namespace)
		return admission.Allowed("").WithWarnings("sidecar injection skipped: cannot decode the pod: " + err.Error())
	}
	log := logf.FromContext(ctx).WithValues("namespace", req.Namespace, "pod", podName(pod))
	changed, warnings, err := h.mutate(ctx, req.Namespace, pod)
	switch {
	case err != nil:
		var skip *skipError
		if errors.As(err, &skip) {
			log.Info("sidecar not injected", "reason", err.Error())
		} else {
			log.Error(err, "sidecar not injected")
		}
		return admission.Allowed("").WithWarnings(append(warnings, "sidecar not injected: "+err.Error())...)
	case !changed:
		return admission.Allowed("").WithWarnings(warnings...)
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		log.Error(err, "encoding the mutated pod; admitted unchanged")
		return admission.Allowed("").WithWarnings("sidecar not injected: " + err.Error())
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, raw)
	if !resp.Allowed {
		msg := "computing the patch"
		if resp.Result != nil {
			msg = resp.Result.Message
		}
		log.Error(errors.New(msg), "patching the pod; admitted unchanged")
		return admission.Allowed("").WithWarnings("sidecar not injected: " + msg)
	}
	log.V(1).Info("pod mutated", "labels", pod.Labels[sidecar.InjectedLabel])
	return resp.WithWarnings(warnings...)
}

// skipError is a decision not to inject (nothing to pick, a collector not in sidecar mode), as
// opposed to a failure.
type skipError struct{ err error }

func (e *skipError) Error() string { return e.err.Error() }
func (e *skipError) Unwrap() error { return e.err }

func skip(err error) error { return &skipError{err: err} }

// mutate applies the annotation to pod. It reports whether pod changed, the warnings for the
// client, and why a requested sidecar was not injected.
func (h *Handler) mutate(ctx context.Context, namespace string, pod *corev1.Pod) (bool, []string, error) {
	if pod.Namespace == "" {
		pod.Namespace = namespace
	}
	podValue := pod.Annotations[Annotation]
	nsValue := ""
	if inject.NeedsNamespace(podValue) {
		ns := &metav1.PartialObjectMetadata{}
		ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		if err := h.opts.APIReader.Get(ctx, client.ObjectKey{Name: pod.Namespace}, ns); err != nil {
			if podValue == "" {
				// Without the namespace nothing says the pod wants a sidecar: no warning.
				logf.FromContext(ctx).Error(err, "reading the namespace's annotations; no sidecar")
				return false, nil, nil
			}
			return false, nil, fmt.Errorf("reading namespace %q: %w", pod.Namespace, err)
		}
		nsValue = ns.GetAnnotations()[Annotation]
	}
	value := inject.Resolve(podValue, nsValue)
	switch {
	case value == "":
		return false, nil, nil
	case inject.IsFalse(value):
		return Remove(pod, h.opts.Manifests.NativeSidecars), nil, nil
	case HasSidecar(pod):
		return false, nil, nil
	}
	otelcol, err := h.collector(ctx, value, pod.Namespace)
	if err != nil {
		return false, nil, err
	}
	warnings, err := Inject(pod, *otelcol, h.opts.Manifests, h.owners(ctx, pod))
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
	return otelcol, nil
}

// owners returns the pod's ReplicaSet (from its owner reference) and that ReplicaSet's
// Deployment (one uncached metadata read). A ReplicaSet that cannot be read only leaves the
// Deployment out.
func (h *Handler) owners(ctx context.Context, pod *corev1.Pod) sidecar.Owners {
	var o sidecar.Owners
	ref := ownerOfKind(pod.OwnerReferences, "ReplicaSet")
	if ref == nil {
		return o
	}
	o.ReplicaSetName, o.ReplicaSetUID = ref.Name, string(ref.UID)
	rs := &metav1.PartialObjectMetadata{}
	rs.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	if err := h.opts.APIReader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, rs); err != nil {
		logf.FromContext(ctx).V(1).Info("the pod's ReplicaSet is not readable; no deployment attributes", "replicaset", ref.Name, "error", err.Error())
		return o
	}
	if d := ownerOfKind(rs.GetOwnerReferences(), "Deployment"); d != nil {
		o.DeploymentName, o.DeploymentUID = d.Name, string(d.UID)
	}
	return o
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
