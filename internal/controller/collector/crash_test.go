package collector

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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

// unavailableDeployment is the rolled-out Deployment c-collector of one replica whose pod is not
// available.
func unavailableDeployment() *appsv1.Deployment {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "c-collector", Generation: 1},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(int32(1))},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1}}
	dep.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	return dep
}

// TestStatusOfACrashLoopingCollector: a crash takes precedence over "rolling out" and
// "unavailable", makes the collector Stalled, and both clear when the pods are available.
func TestStatusOfACrashLoopingCollector(t *testing.T) {
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: 2}}
	dep := unavailableDeployment()
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

func waiting(name, image, reason, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
}

// TestCrashOfContainersThatCannotStart: the kubelet's waiting reasons that do not resolve by
// themselves are reported with the pod, the container, the image and the kubelet's message; a
// pull back-off and the failed pull behind it give the same reason and message.
func TestCrashOfContainersThatCannotStart(t *testing.T) {
	const img = "ghcr.io/example/otelcol:0.1"
	pullErr := `failed to pull and unpack image "ghcr.io/example/otelcol:0.1": failed to resolve reference "ghcr.io/example/otelcol:0.1": not found`
	pullMsg := `pod a: container otc-container (image "ghcr.io/example/otelcol:0.1") cannot start: ErrImagePull: ` + pullErr
	for _, tc := range []struct {
		name       string
		pods       []corev1.Pod
		wantReason string
		want       string // "" for nothing to report
	}{
		{"pull failed", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{waiting("otc-container", img, "ErrImagePull", pullErr)})},
			v1beta1.ReasonImagePullBackOff, pullMsg},
		{"back-off after the failed pull", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{
			waiting("otc-container", img, "ImagePullBackOff", `Back-off pulling image "`+img+`": ErrImagePull: `+pullErr)})},
			v1beta1.ReasonImagePullBackOff, pullMsg},
		{"back-off, the failed pull forgotten (kubelet restarted)", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{
			waiting("otc-container", img, "ImagePullBackOff", `Back-off pulling image "`+img+`"`)})},
			v1beta1.ReasonImagePullBackOff, `pod a: container otc-container (image "` + img + `") cannot start: ImagePullBackOff: Back-off pulling image "` + img + `"`},
		{"registry unavailable, backing off", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{
			waiting("otc-container", img, "ImagePullBackOff", `Back-off pulling image "`+img+`": RegistryUnavailable: image pull failed for `+img+` because the registry is unavailable`)})},
			v1beta1.ReasonImagePullBackOff, `pod a: container otc-container (image "` + img + `") cannot start: RegistryUnavailable: image pull failed for ` + img + ` because the registry is unavailable`},
		{"invalid image name", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{
			waiting("otc-container", "Otelcol:latest", "InvalidImageName", `Failed to apply default image tag "Otelcol:latest": couldn't parse image name "Otelcol:latest": invalid reference format: repository name must be lowercase`)})},
			v1beta1.ReasonInvalidImageName, `pod a: container otc-container (image "Otelcol:latest") cannot start: InvalidImageName: Failed to apply default image tag "Otelcol:latest": couldn't parse image name "Otelcol:latest": invalid reference format: repository name must be lowercase`},
		{"never pull", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{
			waiting("otc-container", img, "ErrImageNeverPull", `Container image "`+img+`" is not present with pull policy of Never`)})},
			v1beta1.ReasonErrImageNeverPull, `pod a: container otc-container (image "` + img + `") cannot start: ErrImageNeverPull: Container image "` + img + `" is not present with pull policy of Never`},
		{"missing key of an env ConfigMap, in a sidecar; the image from the spec", []corev1.Pod{{
			ObjectMeta: metav1.ObjectMeta{Name: "a"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "otc-container", Image: img}, {Name: "proxy", Image: "envoy:1"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: "otc-container", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				waiting("proxy", "", "CreateContainerConfigError", "couldn't find key token in Secret ns/proxy\n")}}}},
			v1beta1.ReasonCreateContainerConfigError, `pod a: container proxy (image "envoy:1") cannot start: CreateContainerConfigError: couldn't find key token in Secret ns/proxy`},
		{"runtime refuses to create, init container", []corev1.Pod{pod("a",
			[]corev1.ContainerStatus{waiting("setup", "busybox:1", "CreateContainerError", "failed to generate container spec:\n  mount /x: no such file")},
			[]corev1.ContainerStatus{waiting("otc-container", img, "PodInitializing", "")})},
			v1beta1.ReasonCreateContainerError, `pod a: init container setup (image "busybox:1") cannot start: CreateContainerError: failed to generate container spec: mount /x: no such file`},
		{"image inspect", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{waiting("otc-container", img, "ImageInspectError", "Failed to inspect image")})},
			v1beta1.ReasonImageInspectError, `pod a: container otc-container (image "` + img + `") cannot start: ImageInspectError: Failed to inspect image`},
		{"creating, pulling, initializing: on their way", []corev1.Pod{
			pod("a", nil, []corev1.ContainerStatus{waiting("otc-container", img, "ContainerCreating", "")}),
			pod("b", []corev1.ContainerStatus{waiting("setup", img, "PodInitializing", "")}, nil)}, "", ""},
		{"start failed: reported as a crash once it restarts, not by its waiting reason", []corev1.Pod{pod("a", nil, []corev1.ContainerStatus{{
			Name: "otc-container", RestartCount: 1,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "RunContainerError", Message: "exec: not found"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: "exec: not found"}}}})},
			v1beta1.ReasonCrashLoopBackOff, "pod a: container otc-container is crash-looping, last exit code 128 (StartError): exec: not found"},
		{"the first pod that cannot run", []corev1.Pod{
			pod("a", nil, []corev1.ContainerStatus{waiting("otc-container", img, "ContainerCreating", "")}),
			pod("b", nil, []corev1.ContainerStatus{crashLooping("otc-container", 1, "")}),
			pod("c", nil, []corev1.ContainerStatus{waiting("otc-container", img, "ErrImagePull", pullErr)})},
			v1beta1.ReasonCrashLoopBackOff, "pod b: container otc-container is crash-looping, last exit code 1 (Error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crashOf(tc.pods)
			if tc.want == "" {
				if c != nil {
					t.Fatalf("reported %s: %q", c.reason, c.Message())
				}
				return
			}
			if c == nil {
				t.Fatal("not reported")
			}
			if c.reason != tc.wantReason || c.Message() != tc.want {
				t.Errorf("got  %s %q\nwant %s %q", c.reason, c.Message(), tc.wantReason, tc.want)
			}
		})
	}
	long := crashOf([]corev1.Pod{pod("a", nil, []corev1.ContainerStatus{waiting("c", img, "ErrImagePull", strings.Repeat("x", 5000))})})
	if n := len(long.Message()); n > 700 {
		t.Errorf("message of %d bytes: the kubelet's message must be truncated", n)
	}
}

// TestStatusOfACollectorWhoseImageCannotBePulled: the reason of the condition is the crash's.
func TestStatusOfACollectorWhoseImageCannotBePulled(t *testing.T) {
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: 1}}
	dep := unavailableDeployment()
	crash := crashOf([]corev1.Pod{pod("c-collector-x", nil, []corev1.ContainerStatus{waiting("otc-container", "otelcol:typo", "ErrImagePull", "not found")})})
	st := computeStatus(col, nil, dep, "0.1", nil, crash)
	want := `Deployment c-collector: 0/1 pods available; pod c-collector-x: container otc-container (image "otelcol:typo") cannot start: ErrImagePull: not found`
	for _, typ := range []string{v1beta1.ConditionReady, v1beta1.ConditionStalled} {
		c := meta.FindStatusCondition(st.Conditions, typ)
		if c == nil || c.Reason != v1beta1.ReasonImagePullBackOff || c.Message != want {
			t.Errorf("%s: %+v", typ, c)
		}
	}
	if !meta.IsStatusConditionFalse(st.Conditions, v1beta1.ConditionReady) || !meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionStalled) {
		t.Errorf("want Ready=False, Stalled=True: %+v", st.Conditions)
	}

	// Still stalled at the next reconcile: the stored transition times stay, so the status
	// computed is the stored one and nothing is written.
	since := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = since
	}
	col.Status = st
	again := computeStatus(col, nil, dep, "0.1", nil, crash)
	if !equality.Semantic.DeepEqual(again, st) {
		t.Errorf("a collector that stays stalled gets a new status:\n got %+v\nwant %+v", again.Conditions, st.Conditions)
	}
}

func TestStarting(t *testing.T) {
	now := time.Now()
	mk := func(age time.Duration, ready, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: metav1.NewTime(now.Add(-age))}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want bool
	}{
		{"no pods", nil, false},
		{"new, not ready", []corev1.Pod{mk(10*time.Second, false, false)}, true},
		{"new, ready", []corev1.Pod{mk(10*time.Second, true, false)}, false},
		{"new, being deleted", []corev1.Pod{mk(10*time.Second, false, true)}, false},
		{"old, not ready: the slow recheck", []corev1.Pod{mk(startingWindow, false, false)}, false},
		{"one of several", []corev1.Pod{mk(time.Hour, false, false), mk(time.Second, false, false)}, true},
	} {
		if got := starting(tc.pods, now); got != tc.want {
			t.Errorf("%s: starting = %v, want %v", tc.name, got, tc.want)
		}
	}
}
