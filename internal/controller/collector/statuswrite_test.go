package collector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/controller/statuswrite"
)

// window is the operator's status coalescing window (the suite runs the default).
const window = statuswrite.DefaultWindow

// statusPatches counts the operator's status writes of collector ns/name since a snapshot of the
// suite's write counter (every request through the operator's real client to the API server).
func statusPatches(before map[string]int, ns, name string) int {
	n := 0
	suffix := "/namespaces/" + ns + "/opentelemetrycollectors/" + name + "/status"
	for req, c := range writes.Since(before) {
		if strings.HasSuffix(req, suffix) {
			n += c
		}
	}
	return n
}

// eventCounts counts the Events about collector name in ns by reason; an Event that repeats an
// earlier one is recorded as a series of it (counted as the series' count).
func eventCounts(g Gomega, ns, name string) map[string]int {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	counts := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Name != name || e.Regarding.Kind != "OpenTelemetryCollector" {
			continue
		}
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		counts[e.Reason] += n
	}
	return counts
}

// setAvailable writes the status the Deployment controller would once every pod of the current
// template is available (replicas 1).
func setAvailable(g Gomega, ns, name string) {
	dep := get(g, ns, name, &appsv1.Deployment{})
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	g.Expect(k8s.Status().Update(context.Background(), dep)).To(Succeed())
}

// changeConfig changes the collector's configuration (a new ConfigMap, a new pod template).
func changeConfig(g Gomega, ns, name, timeout string) {
	col := get(g, ns, name, &v1beta1.OpenTelemetryCollector{})
	cfg := strings.Replace(otlpConfig, "batch: {}", "batch: {timeout: "+timeout+"}", 1)
	col.Spec.Config = v1beta1.Config{}
	g.Expect(yaml.Unmarshal([]byte(cfg), &col.Spec.Config)).To(Succeed())
	g.Expect(k8s.Update(context.Background(), col)).To(Succeed())
}

// TestNewCollectorWhoseWorkloadIsAvailableWithinTheWindowGetsOneStatusWrite: a new collector's
// first status (Progressing) waits for the window; its workload becomes available within it, so
// the one status write is Ready=True with the collector's generation. Then a config change whose
// rollout completes within the window costs one more status write, and no Ready Event.
func TestNewCollectorWhoseWorkloadIsAvailableWithinTheWindowGetsOneStatusWrite(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	_, before := writes.Snapshot()
	g.Expect(k8s.Create(ctx, newCollector(t, ns, "fast", v1beta1.ModeDeployment, otlpConfig))).To(Succeed())
	g.Eventually(func(g Gomega) { get(g, ns, "fast-collector", &appsv1.Deployment{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, "fast-collector")
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "fast", &v1beta1.OpenTelemetryCollector{})
		g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	time.Sleep(window + 2*time.Second) // nothing deferred may be written late
	t.Logf("writes: %v", writes.Since(before))
	g.Expect(statusPatches(before, ns, "fast")).To(Equal(1), "status writes to create a collector whose workload is available within the window")
	g.Expect(eventCounts(g, ns, "fast")).To(And(HaveLen(2), HaveKey("Applied"), HaveKeyWithValue(v1beta1.ReasonReconciled, 1)))

	// A config change whose rollout completes within the window.
	_, before = writes.Snapshot()
	changeConfig(g, ns, "fast", "7s")
	g.Eventually(func(g Gomega) {
		dep := get(g, ns, "fast-collector", &appsv1.Deployment{})
		g.Expect(dep.Generation).To(BeNumerically(">", dep.Status.ObservedGeneration))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, "fast-collector")
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "fast", &v1beta1.OpenTelemetryCollector{})
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	time.Sleep(window + 2*time.Second)
	g.Expect(statusPatches(before, ns, "fast")).To(Equal(1), "status writes for a config change whose rollout completes within the window")
	g.Expect(eventCounts(g, ns, "fast")).To(And(HaveLen(2), HaveKey("Applied"), HaveKeyWithValue(v1beta1.ReasonReconciled, 1)))
}

// TestDeferredTransitionalStatusIsWritten: a workload that does not become available. Its
// collector's status (Ready=False, the generation observed) is written once it has been pending
// for the window, not before, and without an Event. A rollout that outlasts the window shows
// Progressing, then one Ready Event when it completes.
func TestDeferredTransitionalStatusIsWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	_, before := writes.Snapshot()
	col := newCollector(t, ns, "slow", v1beta1.ModeDeployment, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	created := time.Now()
	var cur *v1beta1.OpenTelemetryCollector
	g.Eventually(func(g Gomega) {
		cur = get(g, ns, "slow", &v1beta1.OpenTelemetryCollector{})
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
	}).WithTimeout(window + 10*time.Second).WithPolling(poll).Should(Succeed())
	t.Logf("first status written %s after the create", time.Since(created).Round(100*time.Millisecond))
	ready := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(BeElementOf(v1beta1.ReasonProgressing, v1beta1.ReasonWorkloadUnavailable))
	// The condition was set by the reconcile that wrote it: not before the window (the API's
	// times have second precision).
	g.Expect(ready.LastTransitionTime.Sub(cur.CreationTimestamp.Time)).To(BeNumerically(">=", window-time.Second))
	g.Expect(statusPatches(before, ns, "slow")).To(Equal(1))
	g.Expect(eventCounts(g, ns, "slow")).To(And(HaveLen(1), HaveKey("Applied")))

	// The pods come up: Ready at once, with its Event.
	setAvailable(g, ns, "slow-collector")
	g.Eventually(func(g Gomega) {
		g.Expect(meta.IsStatusConditionTrue(get(g, ns, "slow", &v1beta1.OpenTelemetryCollector{}).Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// A config change whose rollout outlasts the window: Progressing is written after the window
	// (no Event), then Ready=True when the rollout completes (one Event).
	changeConfig(g, ns, "slow", "9s")
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "slow", &v1beta1.OpenTelemetryCollector{})
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		ready := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready.Reason).To(Equal(v1beta1.ReasonProgressing))
	}).WithTimeout(window + 10*time.Second).WithPolling(poll).Should(Succeed())
	setAvailable(g, ns, "slow-collector")
	g.Eventually(func(g Gomega) {
		g.Expect(meta.IsStatusConditionTrue(get(g, ns, "slow", &v1beta1.OpenTelemetryCollector{}).Status.Conditions, v1beta1.ConditionReady)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventCounts(g, ns, "slow")).To(And(HaveLen(2), HaveKey("Applied"), HaveKeyWithValue(v1beta1.ReasonReconciled, 2)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	t.Logf("writes: %v", writes.Since(before))
	g.Expect(statusPatches(before, ns, "slow")).To(Equal(4))

	// A Ready collector loses its pods (not a rollout we started): WorkloadUnavailable is written
	// once it persisted for the window, with a Warning.
	dep := get(g, ns, "slow-collector", &appsv1.Deployment{})
	dep.Status.ReadyReplicas, dep.Status.AvailableReplicas, dep.Status.UnavailableReplicas = 0, 0, 1
	g.Expect(k8s.Status().Update(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(ContainElement(And(HaveField("Reason", v1beta1.ReasonWorkloadUnavailable),
			HaveField("Type", "Warning"), HaveField("Regarding.Name", "slow"))))
	}).WithTimeout(window + 10*time.Second).WithPolling(poll).Should(Succeed())
}

// TestDeferredStatusSurvivesARestart: the operator stops while a new collector's first status is
// deferred (its window is in memory only). The next operator starts a new window at its first
// reconcile and writes the status; nothing is lost.
func TestDeferredStatusSurvivesARestart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, newCollector(t, ns, "restarted", v1beta1.ModeDeployment, otlpConfig))).To(Succeed())
	g.Eventually(func(g Gomega) { get(g, ns, "restarted-collector", &appsv1.Deployment{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(get(g, ns, "restarted", &v1beta1.OpenTelemetryCollector{}).Status.ObservedGeneration).To(BeZero(), "the first status is deferred")
	g.Expect(restartOperator()).To(Succeed())
	restarted := time.Now()
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "restarted", &v1beta1.OpenTelemetryCollector{})
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		ready := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(BeElementOf(v1beta1.ReasonProgressing, v1beta1.ReasonWorkloadUnavailable))
	}).WithTimeout(window + 15*time.Second).WithPolling(poll).Should(Succeed())
	t.Logf("status written %s after the restart", time.Since(restarted).Round(100*time.Millisecond))
}
