package collector

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1beta1"
)

func pod(name string, init, containers []corev1.ContainerStatus) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.PodStatus{InitContainerStatuses: init, ContainerStatuses: containers}}
}

func crashLooping(name string, exit int32, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, RestartCount: 3,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error", Message: msg}},
	}
}

func TestCrashOf(t *testing.T) {
	running := corev1.ContainerStatus{Name: "otc-container", Ready: true, RestartCount: 2,
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}
	cleanExit := corev1.ContainerStatus{Name: "otc-container", RestartCount: 1,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}
	pending := corev1.ContainerStatus{Name: "otc-container",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	upAgain := corev1.ContainerStatus{Name: "otc-container", RestartCount: 1, // running again, not ready yet
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	justDied := corev1.ContainerStatus{Name: "otc-container",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Message: "bad flag"}}}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string // "" for no crash
	}{
		{"none", nil, ""},
		{"ready after an earlier crash", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{running})}, ""},
		{"clean exit", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{cleanExit})}, ""},
		{"pending", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{pending})}, ""},
		{"back-off with the last line of the message",
			[]corev1.Pod{pod("a", nil, []corev1.ContainerStatus{pending}),
				pod("b", nil, []corev1.ContainerStatus{crashLooping("otc-container", 1, "starting\nError: invalid configuration: verbosity loud\n\n")})},
			"pod b: container otc-container is crash-looping, last exit code 1 (Error): Error: invalid configuration: verbosity loud"},
		{"running again after a crash", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{upAgain})},
			"pod a: container otc-container is crash-looping, last exit code 1"},
		{"terminated now", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{justDied})},
			"pod a: container otc-container crashed, last exit code 2: bad flag"},
		{"init container first", []corev1.Pod{pod("a", []corev1.ContainerStatus{crashLooping("init", 3, "")}, []corev1.ContainerStatus{pending})},
			"pod a: init container init is crash-looping, last exit code 3 (Error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := crashOf(tc.pods); c != nil {
				got = c.Message()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	deleting := pod("a", nil, []corev1.ContainerStatus{crashLooping("otc-container", 1, "")})
	deleting.DeletionTimestamp = &metav1.Time{}
	if c := crashOf([]corev1.Pod{deleting}); c != nil {
		t.Errorf("a pod being deleted is not reported: %q", c.Message())
	}
	long := crashOf([]corev1.Pod{pod("a", nil, []corev1.ContainerStatus{crashLooping("c", 1, strings.Repeat("x", 5000))})})
	if n := len(long.Message()); n > 700 {
		t.Errorf("message of %d bytes: the termination message must be truncated", n)
	}
}

// TestStatusOfACrashLoopingCollector: a crash takes precedence over "rolling out" and
// "unavailable", makes the collector Stalled, and both clear when the pods are available.
func TestStatusOfACrashLoopingCollector(t *testing.T) {
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: 2}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "c-collector", Generation: 1},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(int32(1))},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1}}
	dep.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	crash := crashOf([]corev1.Pod{pod("c-collector-x", nil, []corev1.ContainerStatus{crashLooping("otc-container", 1, "boom")})})
	for _, rollingOut := range []bool{false, true} {
		d := dep.DeepCopy()
		if rollingOut {
			d.Generation = 2
		}
		st := computeStatus(col, nil, d, "0.1", nil, crash)
		ready := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady)
		stalled := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionStalled)
		if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != v1beta1.ReasonCrashLoopBackOff {
			t.Fatalf("Ready: %+v", ready)
		}
		want := "Deployment c-collector: 0/1 pods available; pod c-collector-x: container otc-container is crash-looping, last exit code 1 (Error): boom"
		if ready.Message != want {
			t.Errorf("message\n got %q\nwant %q", ready.Message, want)
		}
		if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != v1beta1.ReasonCrashLoopBackOff {
			t.Errorf("Stalled: %+v", stalled)
		}
		if meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReconciling) != nil {
			t.Error("a crash-looping collector is Stalled, not Reconciling")
		}
		col.Status = st
	}
	healthy := dep.DeepCopy()
	healthy.Status.AvailableReplicas, healthy.Status.ReadyReplicas = 1, 1
	st := computeStatus(col, nil, healthy, "0.1", nil, nil)
	if meta.FindStatusCondition(st.Conditions, v1beta1.ConditionStalled) != nil || !meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionReady) {
		t.Errorf("available again: %+v", st.Conditions)
	}
}
