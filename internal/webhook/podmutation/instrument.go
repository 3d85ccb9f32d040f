package podmutation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/inject"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
)

// EventReason is the reason of the Warning Event that says a pod's requested injection was not
// done.
const EventReason = "InstrumentationNotInjected"

// instrument applies the instrumentation.opentelemetry.io/inject-<language> annotations of the
// pod and its namespace. It reports whether the pod changed and the warnings for what was asked
// for and not done.
//
// The Secret and ConfigMap that an Instrumentation's spec.exporter.tls names are mounted by name,
// as upstream does, and never read here: the operator holds no right to read Secrets outside its
// own namespace, and a pod may mount what its own namespace holds. One that does not exist is the
// kubelet's to report (a FailedMount Event on the pod, which waits for it).
func (h *Handler) instrument(r *podRequest) (bool, []string) {
	pod := r.pod
	ns, err := r.namespace()
	if err != nil {
		if len(instrumentation.Requests(pod.Annotations, nil)) == 0 {
			// Without the namespace nothing says the pod wants instrumentation (the sidecar path
			// has logged the error).
			logf.FromContext(r.ctx).V(1).Info("no namespace annotations; no instrumentation", "error", err.Error())
			return false, nil
		}
		r.note(admissionmetrics.Error, reasonAPI)
		return false, []string{"instrumentation not injected: " + err.Error()}
	}
	reqs := instrumentation.Requests(pod.Annotations, ns.Annotations)
	if len(reqs) == 0 {
		return false, nil
	}
	if done, why := instrumentation.Instrumented(pod); done && why == "" {
		r.note(admissionmetrics.Skipped, reasonAlreadyInjected)
		return false, nil
	}
	var warnings []string
	insts := map[instrumentation.Language]*v1alpha1.Instrumentation{}
	for _, req := range reqs {
		if !h.instrumentation.Enabled(req.Language) {
			r.note(admissionmetrics.Skipped, reasonDisabled)
			warnings = append(warnings, instrumentation.NotInjected(req.Language, instrumentation.DisabledMessage(req.Language)))
			continue
		}
		if req.Language == instrumentation.Go && !h.instrumentation.GoAllowedIn(ns) {
			// Inject refuses it too; deciding here spares reading the Instrumentation.
			r.note(admissionmetrics.Refused, reasonGoNamespace)
			warnings = append(warnings, instrumentation.NotInjected(req.Language, instrumentation.GoNotAllowedMessage(pod.Namespace)))
			continue
		}
		inst, err := h.resolve(r, req)
		if err != nil {
			r.noteError(err)
			warnings = append(warnings, instrumentation.NotInjected(req.Language, err.Error()))
			continue
		}
		insts[req.Language] = inst
	}
	if len(insts) == 0 {
		return false, warnings
	}
	res := instrumentation.Inject(instrumentation.Input{
		Pod:              pod,
		Namespace:        ns,
		Owners:           r.ownerChain(),
		Instrumentations: insts,
		Options:          h.instrumentation,
	})
	warnings = append(warnings, res.Warnings...)
	if !res.Changed() {
		r.note(admissionmetrics.Skipped, reasonIncompatible)
		return false, warnings
	}
	*pod = *res.Pod
	return true, warnings
}

// resolve returns the Instrumentation req names: for "true" the one Instrumentation of the pod's
// namespace, else "<name>" in the pod's namespace or "<namespace>/<name>", the latter only when
// that Instrumentation lists the pod's namespace in instrumentation.AllowedNamespacesAnnotation. They come from the
// manager's cache; a named one the cache does not have yet is read once from the API server.
func (h *Handler) resolve(r *podRequest, req instrumentation.Request) (*v1alpha1.Instrumentation, error) {
	key := instrumentation.InjectAnnotation(req.Language)
	namespace := r.pod.Namespace
	if inject.IsTrue(req.Value) {
		list := &v1alpha1.InstrumentationList{}
		if err := h.opts.Collectors.List(r.ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("listing the Instrumentations of namespace %q: %w", namespace, err)
		}
		switch len(list.Items) {
		case 1:
			return &list.Items[0], nil
		case 0:
			return nil, skip(fmt.Errorf("%s=true but namespace %q has no Instrumentation", key, namespace))
		default:
			names := make([]string, len(list.Items))
			for i := range list.Items {
				names[i] = list.Items[i].Name
			}
			slices.Sort(names)
			return nil, skip(fmt.Errorf("%s=true but namespace %q has %d Instrumentations (%s); name one in the annotation",
				key, namespace, len(names), strings.Join(names, ", ")))
		}
	}
	target, err := inject.Target(key, req.Value, namespace)
	if err != nil {
		return nil, skip(err)
	}
	inst := &v1alpha1.Instrumentation{}
	err = h.opts.Collectors.Get(r.ctx, target, inst)
	if apierrors.IsNotFound(err) {
		err = h.opts.APIReader.Get(r.ctx, target, inst)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, skip(fmt.Errorf("%s=%q: Instrumentation %s not found", key, req.Value, target))
	case err != nil:
		return nil, fmt.Errorf("reading Instrumentation %s: %w", target, err)
	}
	if !instrumentation.AllowsNamespace(inst, namespace) {
		return nil, refuse(reasonConsent, fmt.Errorf("%s=%q: Instrumentation %s does not allow pods of namespace %q (its %s annotation must list the namespace or \"*\")",
			key, req.Value, target, namespace, instrumentation.AllowedNamespacesAnnotation))
	}
	return inst, nil
}

// event records warnings as one Warning Event on the pod's top owner (its Deployment, CronJob,
// StatefulSet...) once that owner checks out against the API server (see eventSubject); a pod
// without an owner gets none. The note does not name the pod, so the recorder folds the Events of
// a workload's pods into one series.
func (h *Handler) event(r *podRequest, warnings []string) {
	if h.opts.Recorder == nil || len(warnings) == 0 {
		return
	}
	obj := r.eventSubject()
	if obj == nil {
		return
	}
	note := strings.Join(warnings, "; ")
	if len(note) > 1000 {
		note = note[:997] + "..."
	}
	h.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventReason, "Inject", "%s", note)
}
