package installtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// FailoverPodCreates is how many pods are created after the crash in WebhookFailover.
const FailoverPodCreates = 20

// maxSpreadAttempts bounds the pod creates WebhookFailover makes until every replica has served.
const maxSpreadAttempts = 200

// WebhookFailover proves that pod injection survives the loss of the replica serving it. replicas
// are the processes of the pods behind the webhook Service (at least two). First every replica
// must have answered pod admissions through the Service (each one's admission count rises: the
// control that both serve); then the replica that answered the latest pod is killed (SIGKILL).
// While the endpoints still list it (in a cluster: until its readiness probe has failed
// failureThreshold times), the API server still sends it some calls, and those pods are admitted
// without a sidecar (the pod webhook's failurePolicy is Ignore): how many is logged, and at least
// one must be (the control that the killed replica was still reached, so the creates that follow
// show the endpoints update at work; with random routing, all FailoverPodCreates missing it has
// odds of 2^-20 for two replicas).
// Once the pod is marked not Ready and the endpoints drop it (MarkNotReady),
// FailoverPodCreates pods asking for a sidecar are created: each gets its sidecar, and the
// survivors' counts rise by exactly that many. Pods are created with dryRun.
func WebhookFailover(t *testing.T, replicas []*Operator) {
	if len(replicas) < 2 {
		t.Fatalf("failover needs at least two replicas, got %d", len(replicas))
	}
	g := gomega.NewWithT(t)
	ctx := context.Background()
	first := replicas[0]
	ns := first.namespace(t)
	name := "sidecar-" + ns
	first.create(g, ns, fmt.Sprintf(sidecarCollector, name))
	t.Cleanup(func() {
		_ = first.env.Client.Delete(context.Background(), &v1beta1.OpenTelemetryCollector{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	})
	token := first.metricsToken(g, ns)
	counts := func() []float64 {
		out := make([]float64, len(replicas))
		for i, r := range replicas {
			out[i] = scrapePodAdmissions(g, fmt.Sprintf("https://%s:%d/metrics", r.PodIP, r.MetricsPort), token, false)
		}
		return out
	}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(injected(first.dryRunSidecarPod(g, ns, name))).To(gomega.BeTrue(), "a pod in %s gets its sidecar", ns)
	}).WithTimeout(Timeout).WithPolling(500 * time.Millisecond).Should(gomega.Succeed())

	// The control: every replica answers through the Service. served is the replica that
	// answered the last pod.
	start := counts()
	before := slices.Clone(start)
	served := -1
	for attempt := 0; ; attempt++ {
		g.Expect(injected(first.dryRunSidecarPod(g, ns, name))).To(gomega.BeTrue(), "pod %d before the crash", attempt)
		after := counts()
		served = -1
		all := true
		for i := range replicas {
			if after[i] > before[i] {
				served = i
			}
			all = all && after[i] > start[i]
		}
		g.Expect(served).NotTo(gomega.Equal(-1), "no replica counted pod %d (counts %v -> %v)", attempt, before, after)
		before = after
		if all {
			break
		}
		if attempt >= maxSpreadAttempts {
			t.Fatalf("after %d pods not every replica had served: counts %v -> %v", attempt, start, after)
		}
	}
	t.Logf("every replica served (admissions %v -> %v); killing %s (pod %s), which answered the latest pod",
		start, before, replicas[served].PodIP, replicas[served].Pod)

	g.Expect(replicas[served].Kill(ctx)).To(gomega.Succeed())
	window := 0
	for range FailoverPodCreates {
		if injected(first.dryRunSidecarPod(g, ns, name)) {
			window++
		}
	}
	t.Logf("killed, still in the endpoints: %d of %d pods injected", window, FailoverPodCreates)
	g.Expect(window).To(gomega.BeNumerically("<", FailoverPodCreates), "no call reached the killed replica while the endpoints listed it")
	g.Expect(replicas[served].MarkNotReady(ctx)).To(gomega.Succeed())
	survivors := append(append([]*Operator{}, replicas[:served]...), replicas[served+1:]...)
	survivorCount := func() float64 {
		var sum float64
		for _, r := range survivors {
			sum += scrapePodAdmissions(g, fmt.Sprintf("https://%s:%d/metrics", r.PodIP, r.MetricsPort), token, false)
		}
		return sum
	}
	was := survivorCount()
	for i := range FailoverPodCreates {
		p := first.dryRunSidecarPod(g, ns, name)
		g.Expect(injected(p)).To(gomega.BeTrue(), "pod %d after the crash was admitted without its sidecar", i)
	}
	g.Expect(survivorCount()).To(gomega.Equal(was+FailoverPodCreates), "admissions the surviving replicas counted")
}
