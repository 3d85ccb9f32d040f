package collector

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxPodsRead bounds how many pods one status computation reads: pods are not cached (see
// internal/operator/cache.go), so they are listed from the API server, only for a collector whose
// workload is not available, only that collector's pods, one page of at most this many.
const maxPodsRead = 50

// crashLoopBackOff is the kubelet's waiting reason of a container it restarts with a back-off.
const crashLoopBackOff = "CrashLoopBackOff"

// podCrash is a container of a collector's pod that keeps exiting with an error.
type podCrash struct {
	pod, container string
	// init is true for an init container.
	init bool
	// looping is true once the kubelet has restarted the container (or waits to, in
	// CrashLoopBackOff); false for a first crash.
	looping  bool
	exitCode int32
	// reason is the termination reason (Error, OOMKilled, ...).
	reason string
	// message is the last non-empty line of the termination message (the container's
	// terminationMessagePath, or its log's tail with terminationMessagePolicy
	// FallbackToLogsOnError).
	message string
}

// Message is the status message naming the pod, the container, how it ended and why. It does not
// change from one restart to the next (no restart count, no current state), so a crash loop does
// not rewrite the status on every restart.
func (c *podCrash) Message() string {
	kind := "container"
	if c.init {
		kind = "init container"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s: %s %s ", c.pod, kind, c.container)
	if c.looping {
		b.WriteString("is crash-looping")
	} else {
		b.WriteString("crashed")
	}
	fmt.Fprintf(&b, ", last exit code %d", c.exitCode)
	if c.reason != "" {
		fmt.Fprintf(&b, " (%s)", c.reason)
	}
	if c.message != "" {
		fmt.Fprintf(&b, ": %s", c.message)
	}
	return b.String()
}

// findCrash lists the collector's pods (selected by its workload's selector, in its namespace)
// from reader and returns the first crashing container, or nil.
func findCrash(ctx context.Context, reader client.Reader, namespace string, selector *metav1.LabelSelector) (*podCrash, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		return nil, err // never list a whole namespace
	}
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel},
		client.Limit(maxPodsRead)); err != nil {
		return nil, fmt.Errorf("listing the collector's pods: %w", err)
	}
	return crashOf(pods.Items), nil
}

// crashOf returns the first container (by pod order, init containers first) that is not ready
// and whose last run ended with a non-zero exit code: waiting in CrashLoopBackOff, terminated with
// an error, or restarted after one. Nil when no container crashed.
func crashOf(pods []corev1.Pod) *podCrash {
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, set := range []struct {
			init     bool
			statuses []corev1.ContainerStatus
		}{{true, p.Status.InitContainerStatuses}, {false, p.Status.ContainerStatuses}} {
			for _, s := range set.statuses {
				if c := containerCrash(s); c != nil {
					c.pod, c.init = p.Name, set.init
					return c
				}
			}
		}
	}
	return nil
}

func containerCrash(s corev1.ContainerStatus) *podCrash {
	if s.Ready {
		return nil
	}
	term := s.State.Terminated
	if term == nil || term.ExitCode == 0 {
		term = s.LastTerminationState.Terminated
		if term == nil || term.ExitCode == 0 || s.RestartCount == 0 {
			return nil
		}
	}
	return &podCrash{
		container: s.Name,
		looping:   s.RestartCount > 0 || (s.State.Waiting != nil && s.State.Waiting.Reason == crashLoopBackOff),
		exitCode:  term.ExitCode,
		reason:    term.Reason,
		message:   truncate(lastLine(term.Message), 500),
	}
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
