package apireconciler

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTransition(t *testing.T) {
	warn := func(r string) bool { return r == "Broken" }
	cond := func(s metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: ConditionReady, Status: s, Reason: reason, Message: msg}
	}
	tests := []struct {
		name     string
		was, now *metav1.Condition
		wantType string
		want     bool
	}{
		{"no condition", nil, nil, "", false},
		{"first condition", nil, cond("False", "Reconciling", "x"), corev1.EventTypeNormal, true},
		{"unchanged", cond("True", "Ok", "x"), cond("True", "Ok", "x"), "", false},
		{"progress detail only", cond("False", "Reconciling", "a"), cond("False", "Reconciling", "b"), "", false},
		{"became ready", cond("False", "Reconciling", "a"), cond("True", "Ok", "ready"), corev1.EventTypeNormal, true},
		{"became broken", cond("True", "Ok", "a"), cond("False", "Broken", "why"), corev1.EventTypeWarning, true},
		{"new problem, same reason", cond("False", "Broken", "a"), cond("False", "Broken", "b"), corev1.EventTypeWarning, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			typ, ok := transition(tt.was, tt.now, warn)
			g.Expect(ok).To(Equal(tt.want))
			g.Expect(typ).To(Equal(tt.wantType))
		})
	}
}

// fakeAPI is a minimal API for the status helpers.
type fakeAPI struct {
	API
	phase string
	conds []metav1.Condition
	gen   int64
}

func (f *fakeAPI) SetPhase(p string)                  { f.phase = p }
func (f *fakeAPI) GetConditions() *[]metav1.Condition { return &f.conds }
func (f *fakeAPI) GetGeneration() int64               { return f.gen }

func TestSetKeepsKstatusConditions(t *testing.T) {
	tests := []struct {
		name     string
		set      func(API)
		phase    string
		wantType []string
	}{
		{"progressing", func(o API) { Progressing(o, "Reconciling", "m") }, PhaseProgressing, []string{ConditionReady, ConditionReconciling}},
		{"failed", func(o API) { Failed(o, "Bad", "m") }, PhaseFailed, []string{ConditionReady, ConditionStalled}},
		{"ready", func(o API) { Ready(o, "Ok", "m") }, PhaseReady, []string{ConditionReady}},
		{"terminating", func(o API) { Terminating(o, "Deleting", "m") }, PhaseTerminating, []string{ConditionReady, ConditionReconciling}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := &fakeAPI{gen: 3}
			Failed(o, "Before", "x") // start from a different state
			Progressing(o, "Before", "x")
			tt.set(o)
			g.Expect(o.phase).To(Equal(tt.phase))
			var types []string
			for _, c := range o.conds {
				types = append(types, c.Type)
				g.Expect(c.ObservedGeneration).To(Equal(int64(3)))
			}
			g.Expect(types).To(ConsistOf(tt.wantType))
		})
	}
}
