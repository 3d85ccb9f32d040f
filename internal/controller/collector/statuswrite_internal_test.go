package collector

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
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

// A workload this reconcile configured or recreated is seen as not yet observed by its controller
// (generation one past the observed one), so its old status cannot make the collector Ready; an
// unchanged one, another object's change, or a created workload leave it as read.
func TestAfterApply(t *testing.T) {
	g := NewWithT(t)
	meta := metav1.ObjectMeta{Name: "c-collector", Namespace: "ns", Generation: 3}
	dep := &appsv1.Deployment{ObjectMeta: meta, Status: appsv1.DeploymentStatus{ObservedGeneration: 3}}
	ds := &appsv1.DaemonSet{ObjectMeta: meta, Status: appsv1.DaemonSetStatus{ObservedGeneration: 3}}
	sts := &appsv1.StatefulSet{ObjectMeta: meta, Status: appsv1.StatefulSetStatus{ObservedGeneration: 3}}
	change := func(kind string, action apply.Action, name string) apply.ChangeSet {
		return apply.ChangeSet{{GVK: appsv1.SchemeGroupVersion.WithKind(kind), Namespace: "ns", Name: name, Action: action}}
	}
	for _, tc := range []struct {
		w    client.Object
		kind string
	}{{dep, "Deployment"}, {ds, "DaemonSet"}, {sts, "StatefulSet"}} {
		for _, action := range []apply.Action{apply.Configured, apply.Recreated} {
			got := afterApply(tc.w, change(tc.kind, action, "c-collector"))
			g.Expect(got.GetGeneration()).To(Equal(int64(4)), "%s %s", tc.kind, action)
			g.Expect(tc.w.GetGeneration()).To(Equal(int64(3)), "the live object is not changed")
		}
		g.Expect(afterApply(tc.w, change(tc.kind, apply.Unchanged, "c-collector"))).To(BeIdenticalTo(tc.w))
		g.Expect(afterApply(tc.w, change(tc.kind, apply.Created, "c-collector"))).To(BeIdenticalTo(tc.w))
		g.Expect(afterApply(tc.w, change(tc.kind, apply.Configured, "other"))).To(BeIdenticalTo(tc.w))
		g.Expect(afterApply(tc.w, change("ConfigMap", apply.Configured, "c-collector"))).To(BeIdenticalTo(tc.w))
	}
	g.Expect(afterApply(nil, change("Deployment", apply.Configured, "c-collector"))).To(BeNil())
}
