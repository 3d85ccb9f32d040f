package collector

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/otelop/otelop/api/v1beta1"
)

func TestTransitional(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason}
	}
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{"no condition", nil, false},
		{"ready", []metav1.Condition{cond(v1beta1.ConditionReady, metav1.ConditionTrue, v1beta1.ReasonReconciled)}, false},
		{"progressing", []metav1.Condition{cond(v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonProgressing)}, true},
		{"unavailable", []metav1.Condition{cond(v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonWorkloadUnavailable)}, true},
		{"apply error", []metav1.Condition{cond(v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonReconcileError)}, false},
		{"crash", []metav1.Condition{cond(v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonCrashLoopBackOff)}, false},
		{"stalled while unavailable", []metav1.Condition{
			cond(v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonWorkloadUnavailable),
			cond(v1beta1.ConditionStalled, metav1.ConditionTrue, "ImagePullBackOff")}, false},
	} {
		if got := transitional(v1beta1.OpenTelemetryCollectorStatus{Conditions: tc.conds}); got != tc.want {
			t.Errorf("%s: transitional = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReadyEvent(t *testing.T) {
	c := func(status metav1.ConditionStatus, reason string) *metav1.Condition {
		return &metav1.Condition{Type: v1beta1.ConditionReady, Status: status, Reason: reason}
	}
	var (
		ready       = c(metav1.ConditionTrue, v1beta1.ReasonReconciled)
		progressing = c(metav1.ConditionFalse, v1beta1.ReasonProgressing)
		unavailable = c(metav1.ConditionFalse, v1beta1.ReasonWorkloadUnavailable)
		crash       = c(metav1.ConditionFalse, v1beta1.ReasonCrashLoopBackOff)
		applyErr    = c(metav1.ConditionFalse, v1beta1.ReasonReconcileError)
	)
	for _, tc := range []struct {
		name          string
		before, after *metav1.Condition
		genChanged    bool
		typ           string // "" = no Event
	}{
		{"new collector ready", nil, ready, true, "Normal"},
		{"new collector progressing", nil, progressing, true, ""},
		{"new collector pods starting", nil, unavailable, true, ""},
		{"rollout done", progressing, ready, false, "Normal"},
		{"pods up", unavailable, ready, false, "Normal"},
		{"still ready", ready, ready, true, ""},
		{"rollout starts", ready, progressing, true, ""},
		{"rollout of a spec change, pods starting", ready, unavailable, true, ""},
		{"ready collector lost pods", ready, unavailable, false, "Warning"},
		{"progressing then pods starting", progressing, unavailable, false, ""},
		{"crash", unavailable, crash, false, "Warning"},
		{"crash again", crash, crash, false, ""},
		{"crash to unavailable", crash, unavailable, false, ""},
		{"apply error", ready, applyErr, false, "Warning"},
		{"new collector apply error", nil, applyErr, false, "Warning"},
		{"no condition", ready, nil, false, ""},
	} {
		typ, ok := readyEvent(tc.before, tc.after, tc.genChanged)
		if !ok {
			typ = ""
		}
		if typ != tc.typ {
			t.Errorf("%s: Event %q, want %q", tc.name, typ, tc.typ)
		}
	}
}

func TestRequeueBy(t *testing.T) {
	for _, tc := range []struct{ after, wait, want time.Duration }{
		{0, 0, 0},
		{0, 3 * time.Second, 3 * time.Second},
		{time.Minute, 3 * time.Second, 3 * time.Second},
		{2 * time.Second, 3 * time.Second, 2 * time.Second},
		{time.Minute, 0, time.Minute},
	} {
		if got := requeueBy(ctrl.Result{RequeueAfter: tc.after}, tc.wait).RequeueAfter; got != tc.want {
			t.Errorf("requeueBy(%v, %v) = %v, want %v", tc.after, tc.wait, got, tc.want)
		}
	}
}
