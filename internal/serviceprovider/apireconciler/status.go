package apireconciler

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionReady is the summary condition of a service API object.
const ConditionReady = "Ready"

// Phases the framework itself sets.
const (
	// PhaseProgressing is set while the object is being reconciled.
	PhaseProgressing = "Progressing"
	// PhaseReady is set when the service is ready.
	PhaseReady = "Ready"
	// PhaseFailed is set when the input must be fixed before anything can happen.
	PhaseFailed = "Failed"
	// PhaseTerminating is set while the object is being deleted.
	PhaseTerminating = "Terminating"
)

// Reasons the framework sets.
const (
	// ReasonProviderConfigMissing: no configuration named after the provider exists.
	ReasonProviderConfigMissing = "ProviderConfigMissing"
	// ReasonWaitingForClusterAccess: cluster access is not granted yet.
	ReasonWaitingForClusterAccess = "WaitingForClusterAccess"
	// ReasonReconcileError: the service logic failed; retried with backoff.
	ReasonReconcileError = "ReconcileError"
	// ReasonDeleting: the object is being deleted.
	ReasonDeleting = "Deleting"
)

// kstatus abnormal-true conditions, kept next to Ready so kstatus-aware tools (kubectl wait,
// Flux health checks, Argo CD) read the state: Reconciling while working, Stalled while blocked on
// input; both absent when Ready.
const (
	// ConditionReconciling is True while the provider works towards Ready.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while the provider cannot make progress without a change of input.
	ConditionStalled = "Stalled"
)

// Set sets the phase and the Ready condition of obj in one go, with the matching kstatus
// Reconciling/Stalled conditions.
func Set(obj API, phase string, ready metav1.ConditionStatus, reason, message string) {
	obj.SetPhase(phase)
	conds := obj.GetConditions()
	set := func(typ string, s metav1.ConditionStatus) {
		meta.SetStatusCondition(conds, metav1.Condition{
			Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: obj.GetGeneration(),
		})
	}
	set(ConditionReady, ready)
	switch phase {
	case PhaseFailed:
		set(ConditionStalled, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conds, ConditionReconciling)
	case PhaseReady:
		meta.RemoveStatusCondition(conds, ConditionStalled)
		meta.RemoveStatusCondition(conds, ConditionReconciling)
	default:
		set(ConditionReconciling, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conds, ConditionStalled)
	}
}

// Progressing marks obj as working towards Ready.
func Progressing(obj API, reason, message string) {
	Set(obj, PhaseProgressing, metav1.ConditionFalse, reason, message)
}

// Failed marks obj as blocked on bad input.
func Failed(obj API, reason, message string) {
	Set(obj, PhaseFailed, metav1.ConditionFalse, reason, message)
}

// Ready marks obj as ready.
func Ready(obj API, reason, message string) {
	Set(obj, PhaseReady, metav1.ConditionTrue, reason, message)
}

// Terminating marks obj as being deleted.
func Terminating(obj API, reason, message string) {
	Set(obj, PhaseTerminating, metav1.ConditionFalse, reason, message)
}

// readyOf returns the Ready condition or nil.
func readyOf(obj API) *metav1.Condition {
	return meta.FindStatusCondition(*obj.GetConditions(), ConditionReady)
}
