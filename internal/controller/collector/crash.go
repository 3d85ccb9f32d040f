package collector

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// maxPodsRead bounds how many pods one status computation reads: pods are not cached (see
// internal/operator/cache.go), so they are listed from the API server, only for a collector whose
// workload is not available or rolling out, only that collector's pods, one page of at most this
// many.
const maxPodsRead = 50

// crashLoopBackOff is the kubelet's waiting reason of a container it restarts with a back-off.
const crashLoopBackOff = "CrashLoopBackOff"

// stuckReasons maps the kubelet's waiting reasons of a container it cannot create or start, and
// that will not resolve by themselves (retrying pulls the same missing image, reads the same
// missing key), to the condition reason the collector reports. The kubelet's names are those of
// k8s.io/kubernetes pkg/kubelet/images (pull) and pkg/kubelet/kuberuntime (create), and of
// k8s.io/cri-api/pkg/errors (RegistryUnavailable, SignatureValidationFailed, set on a pull).
//
// A failed pull alternates between its cause (ErrImagePull, RegistryUnavailable,
// SignatureValidationFailed) and ImagePullBackOff while the kubelet waits to retry; all of them are
// reported as ImagePullBackOff with the cause in the message, so that the status (and the Event
// sent when the reason changes) does not flip on every attempt. RunContainerError and
// PostStartHookError are not here: the container was created and exits, so it restarts and the
// crash-loop detection reports it with its exit code.
var stuckReasons = map[string]string{
	"ErrImagePull":               v1beta1.ReasonImagePullBackOff,
	"ImagePullBackOff":           v1beta1.ReasonImagePullBackOff,
	"RegistryUnavailable":        v1beta1.ReasonImagePullBackOff,
	"SignatureValidationFailed":  v1beta1.ReasonImagePullBackOff,
	"InvalidImageName":           v1beta1.ReasonInvalidImageName,
	"ErrImageNeverPull":          v1beta1.ReasonErrImageNeverPull,
	"ImageInspectError":          v1beta1.ReasonImageInspectError,
	"CreateContainerConfigError": v1beta1.ReasonCreateContainerConfigError,
	"CreateContainerError":       v1beta1.ReasonCreateContainerError,
}

// maxKubeletMessage bounds the kubelet's (or the container's) message quoted in the status.
const maxKubeletMessage = 500

// podCrash is a container of a collector's pod that cannot run: it keeps exiting with an error
// (reason CrashLoopBackOff), or the kubelet cannot pull its image or create it (the reasons of
// stuckReasons).
type podCrash struct {
	pod, container string
	// created is when the pod was created.
	created time.Time
	// init is true for an init container (native sidecars included).
	init bool
	// reason is the condition reason: v1beta1.ReasonCrashLoopBackOff or a value of stuckReasons.
	reason string

	// For a container the kubelet cannot start: its image and the kubelet's waiting reason and
	// message (for a back-off, the message of the failed attempt behind it).
	image, waitingReason string

	// For a crash: looping is true once the kubelet has restarted the container (or waits to, in
	// CrashLoopBackOff); false for a first crash.
	looping  bool
	exitCode int32
	// exitReason is the termination reason (Error, OOMKilled, ...).
	exitReason string
	// message is, for a crash, the last non-empty line of the termination message (the
	// container's terminationMessagePath, or its log's tail with terminationMessagePolicy
	// FallbackToLogsOnError); for a container that cannot start, the kubelet's message.
	message string
}

// Message is the status message naming the pod, the container and why it does not run. It does
// not change from one restart (or pull attempt) to the next (no restart count, no current state),
// so a crash loop or a pull back-off does not rewrite the status on every attempt.
func (c *podCrash) Message() string {
	kind := "container"
	if c.init {
		kind = "init container"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s: %s %s ", c.pod, kind, c.container)
	if c.waitingReason != "" {
		fmt.Fprintf(&b, "(image %q) cannot start: %s", c.image, c.waitingReason)
		if c.message != "" {
			fmt.Fprintf(&b, ": %s", c.message)
		}
		return b.String()
	}
	if c.looping {
		b.WriteString("is crash-looping")
	} else {
		b.WriteString("crashed")
	}
	fmt.Fprintf(&b, ", last exit code %d", c.exitCode)
	if c.exitReason != "" {
		fmt.Fprintf(&b, " (%s)", c.exitReason)
	}
	if c.message != "" {
		fmt.Fprintf(&b, ": %s", c.message)
	}
	return b.String()
}

// findCrash lists the collector's pods (selected by its workload's selector, in its namespace)
// from reader and returns the first container that cannot run, or nil, and whether a pod is still
// starting (see starting).
func findCrash(ctx context.Context, reader client.Reader, namespace string, selector *metav1.LabelSelector) (*podCrash, bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		return nil, false, err // never list a whole namespace
	}
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel},
		client.Limit(maxPodsRead)); err != nil {
		return nil, false, fmt.Errorf("listing the collector's pods: %w", err)
	}
	crash := crashOf(pods.Items)
	return crash, crash == nil && starting(pods.Items, time.Now()), nil
}

// startingWindow is how long after its creation a pod that is not ready counts as starting.
const startingWindow = 2 * time.Minute

// starting reports a pod created less than startingWindow before now that is not ready yet: its
// image may still be pulled, or fail to be, or its container crash, with no change of the
// workload's status to trigger a reconcile. Pods are not watched, so the reconciler looks again
// sooner then (startingRecheck), only during that window.
func starting(pods []corev1.Pod, now time.Time) bool {
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || now.Sub(p.CreationTimestamp.Time) >= startingWindow {
			continue
		}
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			return true
		}
	}
	return false
}

// crashOf returns the first container (by pod order, init containers first) that is not ready and
// either waits for a reason of stuckReasons (it cannot be pulled or created) or whose last run
// ended with a non-zero exit code (waiting in CrashLoopBackOff, terminated with an error, or
// restarted after one). Every container of the pod counts, the collector's, its init containers
// and the ones added with spec.initContainers and spec.additionalContainers: any of them keeps
// the pod from being available. Nil when every container runs or is on its way.
func crashOf(pods []corev1.Pod) *podCrash {
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, set := range []struct {
			init     bool
			statuses []corev1.ContainerStatus
			specs    []corev1.Container
		}{{true, p.Status.InitContainerStatuses, p.Spec.InitContainers}, {false, p.Status.ContainerStatuses, p.Spec.Containers}} {
			for _, s := range set.statuses {
				if c := containerCrash(s, set.specs); c != nil {
					c.pod, c.init, c.created = p.Name, set.init, p.CreationTimestamp.Time
					return c
				}
			}
		}
	}
	return nil
}

func containerCrash(s corev1.ContainerStatus, specs []corev1.Container) *podCrash {
	if s.Ready {
		return nil
	}
	if c := containerStuck(s, specs); c != nil {
		return c
	}
	term := s.State.Terminated
	if term == nil || term.ExitCode == 0 {
		term = s.LastTerminationState.Terminated
		if term == nil || term.ExitCode == 0 || s.RestartCount == 0 {
			return nil
		}
	}
	return &podCrash{
		container:  s.Name,
		reason:     v1beta1.ReasonCrashLoopBackOff,
		looping:    s.RestartCount > 0 || (s.State.Waiting != nil && s.State.Waiting.Reason == crashLoopBackOff),
		exitCode:   term.ExitCode,
		exitReason: term.Reason,
		message:    truncate(lastLine(term.Message), maxKubeletMessage),
	}
}

// containerStuck reports a container waiting for a reason of stuckReasons, or nil.
func containerStuck(s corev1.ContainerStatus, specs []corev1.Container) *podCrash {
	w := s.State.Waiting
	if w == nil {
		return nil
	}
	reason, ok := stuckReasons[w.Reason]
	if !ok {
		return nil
	}
	image := s.Image
	if image == "" {
		for _, c := range specs {
			if c.Name == s.Name {
				image = c.Image
			}
		}
	}
	waitingReason, msg := w.Reason, strings.Join(strings.Fields(w.Message), " ")
	if w.Reason == "ImagePullBackOff" {
		waitingReason, msg = pullBackOffCause(msg)
	}
	return &podCrash{container: s.Name, reason: reason, image: image, waitingReason: waitingReason,
		message: truncate(msg, maxKubeletMessage)}
}

// pullBackOffCause returns the reason and message of the failed pull behind an ImagePullBackOff
// message: the kubelet writes `Back-off pulling image "<image>": <reason>: <message>` (the suffix
// only while it remembers the failed attempt). It is what the waiting state said during that
// attempt, so a collector's message stays the same as the kubelet alternates between the two.
func pullBackOffCause(msg string) (reason, message string) {
	const prefix = "Back-off pulling image "
	if rest, ok := strings.CutPrefix(msg, prefix); ok {
		if _, cause, ok := strings.Cut(rest, `": `); ok {
			if r, m, ok := strings.Cut(cause, ": "); ok && stuckReasons[r] == v1beta1.ReasonImagePullBackOff {
				return r, m
			}
		}
	}
	return "ImagePullBackOff", msg
}

// lastLine returns the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
