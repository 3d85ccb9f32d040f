package collector

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
)

// collectorContainer is the name of the collector's container in every mode.
const collectorContainer = "otc-container"

// currentWorkload returns the collector's workload (Deployment, DaemonSet or StatefulSet) as the
// status must see it after this reconcile's apply, or nil (sidecar mode). That is the newest
// version the reconcile knows: the API server's response when the apply wrote the workload or read
// it (the cache had not yet seen an earlier write), else the cached one, else the desired object
// (not created). A cached copy older than the apply would record the collector's new generation as
// Ready before the workload controller has even seen the change.
func currentWorkload(desired []client.Object, existing apply.Objects, changes apply.ChangeSet) client.Object {
	for _, d := range desired {
		switch d.GetObjectKind().GroupVersionKind().Kind {
		case "Deployment", "DaemonSet", "StatefulSet":
		default:
			continue
		}
		k := apply.KeyOf(d)
		for _, c := range changes {
			if c.Live != nil && c.GVK == k.GVK && c.Namespace == k.Namespace && c.Name == k.Name {
				return typedWorkload(d, c.Live)
			}
		}
		if live, ok := existing[k]; ok {
			return live
		}
		return d
	}
	return nil
}

// typedWorkload converts live, the API server's version of the desired workload d, to d's type.
// If it cannot (an answer no API server gives), it returns a copy of d at live's generation with
// no status: a rollout not observed yet, which is what the status may claim without knowing more.
func typedWorkload(d, live client.Object) client.Object {
	if _, ok := live.(*unstructured.Unstructured); !ok {
		return live
	}
	var typed client.Object
	switch d.(type) {
	case *appsv1.Deployment:
		typed = &appsv1.Deployment{}
	case *appsv1.StatefulSet:
		typed = &appsv1.StatefulSet{}
	case *appsv1.DaemonSet:
		typed = &appsv1.DaemonSet{}
	}
	if typed != nil && runtime.DefaultUnstructuredConverter.FromUnstructured(live.(*unstructured.Unstructured).Object, typed) == nil {
		return typed
	}
	out := d.DeepCopyObject().(client.Object)
	out.SetGeneration(live.GetGeneration())
	out.SetUID(live.GetUID())
	return out
}

// rollout summarises a workload's pods.
type rollout struct {
	desired, ready, available int32
	// current is the pods the workload has now (status.replicas; a DaemonSet's desired number
	// scheduled): what status.scale.replicas reports, as upstream's does, and what an HPA reads
	// through the collector's scale subresource as the current replica count.
	current  int32
	upToDate bool
	selector *metav1.LabelSelector
	// podLabels are the pod template's labels: status.scale.selector selects them all, as upstream's
	// does (the CR's labels, name, version and the selector labels), not only the workload's selector.
	podLabels map[string]string
}

// unavailable reports a workload that exists and has fewer available pods than it wants.
func (ro rollout) unavailable() bool { return ro.available < ro.desired }

func rolloutOf(w client.Object) (rollout, bool) {
	switch w := w.(type) {
	case *appsv1.Deployment:
		want := int32(1)
		if w.Spec.Replicas != nil {
			want = *w.Spec.Replicas
		}
		return rollout{desired: want, ready: w.Status.ReadyReplicas, available: w.Status.AvailableReplicas, current: w.Status.Replicas,
			upToDate: w.Status.ObservedGeneration >= w.Generation && w.Generation > 0 &&
				w.Status.UpdatedReplicas == want && w.Status.Replicas == want,
			selector: w.Spec.Selector, podLabels: w.Spec.Template.Labels}, true
	case *appsv1.StatefulSet:
		want := int32(1)
		if w.Spec.Replicas != nil {
			want = *w.Spec.Replicas
		}
		return rollout{desired: want, ready: w.Status.ReadyReplicas, available: w.Status.AvailableReplicas, current: w.Status.Replicas,
			upToDate: w.Status.ObservedGeneration >= w.Generation && w.Generation > 0 &&
				w.Status.UpdatedReplicas == want && w.Status.Replicas == want,
			selector: w.Spec.Selector, podLabels: w.Spec.Template.Labels}, true
	case *appsv1.DaemonSet:
		want := w.Status.DesiredNumberScheduled
		return rollout{desired: want, ready: w.Status.NumberReady, available: w.Status.NumberAvailable, current: want,
			upToDate: w.Status.ObservedGeneration >= w.Generation && w.Generation > 0 &&
				w.Status.UpdatedNumberScheduled == want,
			selector: w.Spec.Selector, podLabels: w.Spec.Template.Labels}, true
	}
	return rollout{}, false
}

// imageOf returns the collector container's image in a desired workload.
func imageOf(desired []client.Object) string {
	for _, d := range desired {
		var containers []corev1.Container
		switch w := d.(type) {
		case *appsv1.Deployment:
			containers = w.Spec.Template.Spec.Containers
		case *appsv1.StatefulSet:
			containers = w.Spec.Template.Spec.Containers
		case *appsv1.DaemonSet:
			containers = w.Spec.Template.Spec.Containers
		}
		for _, c := range containers {
			if c.Name == collectorContainer {
				return c.Image
			}
		}
	}
	return ""
}

// computeStatus derives the collector's status from what was applied and the live workload.
// Ready is True only when the workload's pods are all updated and available; sidecar collectors
// are Ready once their configuration is applied (their pods belong to other workloads). crash,
// when not nil, is a container of the collector's pods that crash-loops or cannot be pulled or
// created (read only while the workload is not available or rolls out): it makes the collector
// Stalled with the kubelet's reason (CrashLoopBackOff, ImagePullBackOff, ...).
func computeStatus(otelcol *v1beta1.OpenTelemetryCollector, desired []client.Object, workload client.Object, version string, applyErr error, crash *podCrash) v1beta1.OpenTelemetryCollectorStatus {
	st := *otelcol.Status.DeepCopy()
	gen := otelcol.Generation
	st.Version = version
	if img := imageOf(desired); img != "" {
		st.Image = img
	}
	meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionStalled)
	if applyErr != nil {
		msg := truncate(applyErr.Error(), 2000)
		setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonReconcileError, msg)
		setCondition(&st, gen, v1beta1.ConditionReconciling, metav1.ConditionTrue, v1beta1.ReasonReconcileError, "retrying: "+msg)
		return st
	}
	st.ObservedGeneration = gen
	ro, ok := rolloutOf(workload)
	if !ok {
		st.Scale = v1beta1.ScaleSubresourceStatus{}
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
		setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionTrue, v1beta1.ReasonReconciled,
			"sidecar configuration applied; pods get the collector injected when they are created")
		return st
	}
	st.Scale.Replicas = ro.current
	st.Scale.StatusReplicas = fmt.Sprintf("%d/%d", ro.ready, ro.current)
	if len(ro.podLabels) > 0 {
		st.Scale.Selector = labels.SelectorFromSet(ro.podLabels).String()
	}
	kind := workload.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = "workload"
	}
	switch {
	case ro.upToDate && ro.available >= ro.desired:
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
		setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionTrue, v1beta1.ReasonReconciled,
			fmt.Sprintf("%s %s: %d/%d pods available", kind, workload.GetName(), ro.available, ro.desired))
	case crash != nil:
		// A container that crash-loops (CrashLoopBackOff) or that the kubelet cannot pull or
		// create (ImagePullBackOff, CreateContainerConfigError, ...): crash.reason says which.
		msg := fmt.Sprintf("%s %s: %d/%d pods available; %s", kind, workload.GetName(), ro.available, ro.desired, crash.Message())
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
		setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionFalse, crash.reason, msg)
		// Stalled was removed above: put the stored one back first, so that its
		// lastTransitionTime stays while the collector stays Stalled (else every reconcile
		// in a new second would write the status).
		if prev := meta.FindStatusCondition(otelcol.Status.Conditions, v1beta1.ConditionStalled); prev != nil {
			meta.SetStatusCondition(&st.Conditions, *prev)
		}
		setCondition(&st, gen, v1beta1.ConditionStalled, metav1.ConditionTrue, crash.reason, msg)
	case !ro.upToDate:
		msg := fmt.Sprintf("%s %s is rolling out: %d/%d pods available", kind, workload.GetName(), ro.available, ro.desired)
		setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonProgressing, msg)
		setCondition(&st, gen, v1beta1.ConditionReconciling, metav1.ConditionTrue, v1beta1.ReasonProgressing, msg)
	default:
		msg := fmt.Sprintf("%s %s: %d/%d pods available", kind, workload.GetName(), ro.available, ro.desired)
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
		setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonWorkloadUnavailable, msg)
	}
	return st
}

// setCondition sets a condition, keeping its transition time when the status did not change.
func setCondition(st *v1beta1.OpenTelemetryCollectorStatus, gen int64, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen,
	})
}
