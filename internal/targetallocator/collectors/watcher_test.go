package collectors

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{}, func(e *testenv.Env) { env = e })
}

func pod(name, node string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "obs", Labels: lbls},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "otelcol"}}},
	}
}

// TestWatcherFindsSelectedScheduledHealthyPods runs the watcher against a real API server:
// pods outside the selector or namespace, unscheduled pods and pods unready beyond the grace
// period are not collectors.
func TestWatcherFindsSelectedScheduledHealthyPods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	for _, ns := range []string{"obs", "other"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sel := map[string]string{"app.kubernetes.io/component": "opentelemetry-collector"}
	create := func(p *corev1.Pod) *corev1.Pod {
		t.Helper()
		out, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	create(pod("col-0", "node-a", sel))
	create(pod("col-1", "node-b", sel))
	create(pod("pending", "", sel))
	create(pod("unrelated", "node-a", map[string]string{"app": "x"}))
	other := pod("elsewhere", "node-a", sel)
	other.Namespace = "other"
	create(other)
	// col-2 has been unready for an hour: beyond the grace period.
	sick := create(pod("col-2", "node-c", sel))
	sick.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
		Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}}
	if _, err := cs.CoreV1().Pods("obs").UpdateStatus(ctx, sick, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var last []allocation.Collector
	w := &Watcher{Client: cs, Namespace: "obs", Selector: &metav1.LabelSelector{MatchLabels: sel},
		GracePeriod: 30 * time.Second, MinInterval: 100 * time.Millisecond,
		OnChange: func(c []allocation.Collector) { mu.Lock(); last = c; mu.Unlock() }}
	go func() { _ = w.Run(ctx) }()
	waitFor(t, &mu, &last, "col-0@node-a col-1@node-b")

	// A new collector appears, one goes away.
	create(pod("col-3", "node-a", sel))
	if err := cs.CoreV1().Pods("obs").Delete(ctx, "col-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &mu, &last, "col-1@node-b col-3@node-a")
}

func waitFor(t *testing.T, mu *sync.Mutex, last *[]allocation.Collector, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	got := ""
	for time.Now().Before(deadline) {
		mu.Lock()
		got = ""
		for i, c := range *last {
			if i > 0 {
				got += " "
			}
			got += c.Name + "@" + c.NodeName
		}
		mu.Unlock()
		if got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("collectors = %q, want %q", got, want)
}

func TestUnhealthy(t *testing.T) {
	now := time.Now()
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, StartTime: &metav1.Time{Time: now.Add(-time.Minute)}}}
	if !Unhealthy(p, 30*time.Second, now) || Unhealthy(p, 2*time.Minute, now) || Unhealthy(p, 0, now) {
		t.Fatal("pending pod grace period")
	}
}
