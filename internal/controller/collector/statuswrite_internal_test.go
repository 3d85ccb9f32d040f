package collector

import (
	"reflect"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// The status sees the newest version of the workload this reconcile knows: the API server's answer
// to the apply (or to the read that caught a stale cache up) over the cached copy, the cached copy
// when the apply left it alone, the desired object when it does not exist; never another object's.
func TestCurrentWorkload(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		desired, cached client.Object
	}{
		{&appsv1.Deployment{}, &appsv1.Deployment{Status: appsv1.DeploymentStatus{ObservedGeneration: 3, AvailableReplicas: 1}}},
		{&appsv1.DaemonSet{}, &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{ObservedGeneration: 3, NumberAvailable: 1}}},
		{&appsv1.StatefulSet{}, &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{ObservedGeneration: 3, AvailableReplicas: 1}}},
	} {
		kind := reflect.TypeOf(tc.desired).Elem().Name()
		gvk := appsv1.SchemeGroupVersion.WithKind(kind)
		for _, o := range []client.Object{tc.desired, tc.cached} {
			o.GetObjectKind().SetGroupVersionKind(gvk)
			o.SetName("c-collector")
			o.SetNamespace("ns")
		}
		tc.cached.SetGeneration(3)
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c-collector", Namespace: "ns"}}
		desired := []client.Object{cm, tc.desired}
		existing := apply.Objects{apply.KeyOf(tc.cached): tc.cached}

		// The apply's answer: generation 4, the status of generation 3.
		newer := &unstructured.Unstructured{}
		newer.SetGroupVersionKind(gvk)
		newer.SetName("c-collector")
		newer.SetNamespace("ns")
		newer.SetGeneration(4)
		g.Expect(unstructured.SetNestedField(newer.Object, int64(3), "status", "observedGeneration")).To(Succeed())
		answered := func(action apply.Action, name string, k schema.GroupVersionKind) apply.ChangeSet {
			return apply.ChangeSet{{GVK: k, Namespace: "ns", Name: name, Action: action, Live: newer}}
		}
		for _, action := range []apply.Action{apply.Configured, apply.Recreated, apply.Unchanged} {
			got := currentWorkload(desired, existing, answered(action, "c-collector", gvk))
			g.Expect(got).To(BeAssignableToTypeOf(tc.desired), "%s %s", kind, action)
			g.Expect(got.GetGeneration()).To(Equal(int64(4)), "%s %s", kind, action)
			ro, _ := rolloutOf(got)
			g.Expect(ro.upToDate).To(BeFalse(), "%s %s: a generation its controller has not observed", kind, action)
		}
		g.Expect(currentWorkload(desired, existing, apply.ChangeSet{{GVK: gvk, Namespace: "ns", Name: "c-collector", Action: apply.Unchanged}})).To(BeIdenticalTo(tc.cached))
		g.Expect(currentWorkload(desired, existing, answered(apply.Configured, "other", gvk))).To(BeIdenticalTo(tc.cached))
		g.Expect(currentWorkload(desired, existing, answered(apply.Configured, "c-collector", cm.GroupVersionKind()))).To(BeIdenticalTo(tc.cached))
		g.Expect(currentWorkload(desired, apply.Objects{}, nil)).To(BeIdenticalTo(tc.desired))
	}
	g.Expect(currentWorkload([]client.Object{&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}}, apply.Objects{}, nil)).To(BeNil())
}
