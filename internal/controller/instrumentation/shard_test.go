package instrumentation_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	kevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	"github.com/otelop/otelop/internal/controller/owned"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// suiteShard is the suite controller's shard: Instrumentations without the shard label, so that
// the shard tests' Instrumentations are acted on only by the reconcilers those tests run.
const suiteShard = "!" + owned.ShardLabel

// TestShardsDoNotRestartOneWorkloadForever is the attack of issue 29, finding 4: a Deployment
// asks for Java from Instrumentation "a" (shard a) and Python from "b" (shard b), both opted in to
// restarts, and its pods never get injected (the webhook is down). The old shards each resolved
// only their own Instrumentation, so each wrote its own otelop.io/restarted-for record, saw the
// other's as not its own and restarted again: one restart per scan, forever, each shard within its
// own rate limit. Now both resolve against every Instrumentation (the same record) and the restart
// falls to one shard only. The test plays the Deployment controller (settles each rollout) and
// runs the two shards' scans in turns. Positive control: the workload is restarted once.
func TestShardsDoNotRestartOneWorkloadForever(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	d := deployment(t, ns, "web", map[string]string{inst.InjectAnnotation(inst.Java): "a", inst.InjectAnnotation(inst.Python): "b"}, nil)
	optIn := map[string]string{ctrlinst.RestartOptInAnnotation: "true"}
	for _, name := range []string{"a", "b"} {
		in := &v1alpha1.Instrumentation{}
		in.Namespace, in.Name, in.Annotations = ns, name, optIn
		in.Labels = map[string]string{owned.ShardLabel: name}
		in.Spec.Exporter.Endpoint = "http://collector:4318"
		g.Expect(k8s.Create(ctx, in)).To(Succeed())
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), in) })
	}
	shard := func(value string) *ctrlinst.Reconciler {
		sel, err := owned.ParseShard(value)
		g.Expect(err).NotTo(HaveOccurred())
		return &ctrlinst.Reconciler{Client: k8s, Scanner: ctrlinst.Scanner{Reader: k8s, Apps: apps}, Recorder: &kevents.FakeRecorder{},
			Interval: interval, Limiter: ctrlinst.NewLimiter(10), Shard: sel}
	}
	shards := []*ctrlinst.Reconciler{shard("a"), shard("b")}

	generation := func() int64 {
		got := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), got)).To(Succeed())
		return got.Generation
	}
	start := generation()
	const rounds = 4
	for range rounds {
		for _, r := range shards {
			_, err := r.Reconcile(ctx, reconcile.Request{})
			g.Expect(err).NotTo(HaveOccurred())
			settleDeployment(t, d, 1) // the rollout ends; its new pod was admitted without instrumentation again
		}
	}
	restarts := generation() - start
	t.Logf("%d restarts in %d rounds of two shards", restarts, rounds)
	g.Expect(restarts).To(Equal(int64(1)), "restarted once, then left alone")
	got := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), got)).To(Succeed())
	g.Expect(got.Spec.Template.Annotations).To(HaveKeyWithValue(ctrlinst.RestartedForAnnotation,
		"java="+ns+"/a@1,python="+ns+"/b@1"), "one record naming both shards' Instrumentations")
	for _, name := range []string{"a", "b"} {
		g.Expect(workloads(g, ns, name).PendingWorkloads).To(ConsistOf(HaveField("Reason", ctrlinst.ReasonRestartDidNotInject)),
			"each shard reports the workload in its own Instrumentation's status")
	}
}
