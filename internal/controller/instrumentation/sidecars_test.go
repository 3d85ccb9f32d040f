package instrumentation_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	kevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	"github.com/otelop/otelop/internal/controller/owned"
	"github.com/otelop/otelop/internal/sidecar"
)

// newCollector creates an OpenTelemetryCollector in mode, deleted when the test ends.
func newCollector(t *testing.T, ns, name string, mode v1beta1.Mode, ann, labels map[string]string) *v1beta1.OpenTelemetryCollector {
	t.Helper()
	c := &v1beta1.OpenTelemetryCollector{}
	if err := yaml.Unmarshal([]byte(`
spec:
  upgradeStrategy: automatic
  config:
    receivers: {otlp: {protocols: {grpc: {}}}}
    exporters: {debug: {}}
    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}
`), c); err != nil {
		t.Fatal(err)
	}
	c.Namespace, c.Name, c.Annotations, c.Labels, c.Spec.Mode = ns, name, ann, labels, mode
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), c) })
	return c
}

func sidecarsOf(g Gomega, ns, name string) *v1beta1.SidecarWorkloads {
	c := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c.Status.Sidecars
}

func collectorEvents(g Gomega, ns, name, reason string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "OpenTelemetryCollector" && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// TestSidecarCollectorsCatchUp: workloads whose pods run without their sidecar (admitted while
// the webhook was down) are counted outdated in the sidecar collector's status.sidecars with a
// Warning Event; the opted-in collector's workload is restarted once, for the collector's
// generation, and once its new pod carries the record it is current (Normal Event). The
// control collector, not opted in, has its workload counted by the same scans and never
// restarted. A deployment-mode collector is not followed.
func TestSidecarCollectorsCatchUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	gw := newCollector(t, ns, "gateway", v1beta1.ModeDeployment, nil, nil)
	opted := newCollector(t, ns, "opted", v1beta1.ModeSidecar, nil, nil)
	newCollector(t, ns, "control", v1beta1.ModeSidecar, nil, nil)
	record := func(name string, gen int64) map[string]string {
		return map[string]string{sidecar.GenerationAnnotation: fmt.Sprintf("%s/%s@%d", ns, name, gen)}
	}
	app := deployment(t, ns, "app", map[string]string{sidecar.InjectAnnotation: "opted"}, nil)
	deployment(t, ns, "ok", map[string]string{sidecar.InjectAnnotation: "opted"}, record("opted", opted.Generation))
	ctl := deployment(t, ns, "ctl", map[string]string{sidecar.InjectAnnotation: "control"}, nil)
	deployment(t, ns, "gw-user", map[string]string{sidecar.InjectAnnotation: "gateway"}, nil)

	outdated := func(name string) v1beta1.OutdatedWorkload {
		return v1beta1.OutdatedWorkload{Kind: "Deployment", Namespace: ns, Name: name, Reason: ctrlinst.ReasonNotInjected}
	}
	g.Eventually(func(g Gomega) {
		g.Expect(sidecarsOf(g, ns, "opted")).To(Equal(&v1beta1.SidecarWorkloads{Current: 1, Outdated: 1,
			OutdatedWorkloads: []v1beta1.OutdatedWorkload{outdated("app")}}))
		g.Expect(sidecarsOf(g, ns, "control")).To(Equal(&v1beta1.SidecarWorkloads{Outdated: 1,
			OutdatedWorkloads: []v1beta1.OutdatedWorkload{outdated("ctl")}}))
		g.Expect(collectorEvents(g, ns, "opted", ctrlinst.EventSidecarsOutdated)).To(HaveLen(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(sidecarsOf(g, ns, gw.Name)).To(BeNil(), "not a sidecar collector")
	ev := collectorEvents(g, ns, "control", ctrlinst.EventSidecarsOutdated)
	g.Expect(ev).To(HaveLen(1))
	g.Expect(ev[0].Type).To(Equal("Warning"))
	g.Expect(ev[0].Note).To(ContainSubstring("Deployment " + ns + "/ctl (NotInjected)"))
	g.Expect(restartedAt(g, app)).To(BeEmpty(), "no restart before the opt-in")

	setAnnotations(t, opted, map[string]string{ctrlinst.RestartOptInAnnotation: "true"})
	g.Eventually(func(g Gomega) string { return restartedAt(g, app) }).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
	g.Expect(app.Spec.Template.Annotations).To(HaveKeyWithValue(ctrlinst.SidecarRestartedForAnnotation,
		fmt.Sprintf("sidecar=%s/opted@%d", ns, opted.Generation)))
	g.Expect(app.Spec.Template.Annotations).NotTo(HaveKey(ctrlinst.RestartedForAnnotation), "the Instrumentation path's record is its own")

	// Its rollout finishes (we play the Deployment controller and the webhook): revision 2, a pod
	// with the sidecar record.
	app.Annotations[ctrlinst.DeploymentRevisionAnnotation] = "2"
	g.Expect(k8s.Update(ctx, app)).To(Succeed())
	pod(t, replicaSet(t, app, "2"), "ReplicaSet", "app-2-0", record("opted", opted.Generation), map[string]string{"app": "app"})
	settleDeployment(t, app, 1)
	g.Eventually(func(g Gomega) {
		g.Expect(sidecarsOf(g, ns, "opted")).To(Equal(&v1beta1.SidecarWorkloads{Current: 2}))
		g.Expect(collectorEvents(g, ns, "opted", ctrlinst.EventSidecarsCurrent)).To(HaveLen(1))
		g.Expect(collectorEvents(g, ns, "opted", ctrlinst.EventWorkloadRestarted)).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The control, counted by all those scans, was never restarted.
	g.Expect(sidecarsOf(g, ns, "control")).To(Equal(&v1beta1.SidecarWorkloads{Outdated: 1,
		OutdatedWorkloads: []v1beta1.OutdatedWorkload{outdated("ctl")}}))
	g.Expect(restartedAt(g, ctl)).To(BeEmpty())
	g.Expect(collectorEvents(g, ns, "control", ctrlinst.EventWorkloadRestarted)).To(BeEmpty())
}

// TestSidecarAndInstrumentationRestartsDoNotLoop: a Deployment asks for Java from Instrumentation
// "a" (shard a) and for sidecar collector "s" (shard b), both opted in, and its pods never get
// either (the webhook is down). The Instrumentation path of shard a and the sidecar paths of
// shards a and b run in turns, and the test plays the Deployment controller. Each path keeps its
// own restart record, so the workload is restarted once per path and then left alone, where one
// shared record would have been overwritten by each path in turn (a restart per scan, forever);
// the sidecar path of shard a, which does not own "s", never restarts it.
func TestSidecarAndInstrumentationRestartsDoNotLoop(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	d := deployment(t, ns, "web", map[string]string{"instrumentation.opentelemetry.io/inject-java": "a", sidecar.InjectAnnotation: "s"}, nil)
	optIn := map[string]string{ctrlinst.RestartOptInAnnotation: "true"}
	// Labelled from the start: the suite's controller (no shard label) never acts on them.
	in := &v1alpha1.Instrumentation{}
	in.Namespace, in.Name, in.Annotations = ns, "a", optIn
	in.Labels = map[string]string{owned.ShardLabel: "a"}
	in.Spec.Exporter.Endpoint = "http://collector:4318"
	g.Expect(k8s.Create(ctx, in)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), in) })
	s := newCollector(t, ns, "s", v1beta1.ModeSidecar, optIn, map[string]string{owned.ShardLabel: "b"})

	reconciler := func(shard string, sidecars bool) *ctrlinst.Reconciler {
		sel, err := owned.ParseShard(shard)
		g.Expect(err).NotTo(HaveOccurred())
		return &ctrlinst.Reconciler{Client: k8s, Scanner: ctrlinst.Scanner{Reader: k8s, Apps: apps}, Recorder: &kevents.FakeRecorder{},
			Interval: interval, Limiter: ctrlinst.NewLimiter(10), Shard: sel, Sidecars: sidecars}
	}
	paths := []*ctrlinst.Reconciler{reconciler("a", false), reconciler("a", true), reconciler("b", true)}
	generation := func() int64 {
		got := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), got)).To(Succeed())
		return got.Generation
	}
	start := generation()
	const rounds = 4
	for range rounds {
		for _, r := range paths {
			_, err := r.Reconcile(ctx, reconcile.Request{})
			g.Expect(err).NotTo(HaveOccurred())
			settleDeployment(t, d, 1) // the rollout ends; its new pod was admitted without either again
		}
	}
	restarts := generation() - start
	t.Logf("%d restarts in %d rounds of three paths", restarts, rounds)
	g.Expect(restarts).To(Equal(int64(2)), "one restart per path, then left alone")
	got := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), got)).To(Succeed())
	g.Expect(got.Spec.Template.Annotations).To(HaveKeyWithValue(ctrlinst.RestartedForAnnotation, "java="+ns+"/a@1"))
	g.Expect(got.Spec.Template.Annotations).To(HaveKeyWithValue(ctrlinst.SidecarRestartedForAnnotation,
		fmt.Sprintf("sidecar=%s/s@%d", ns, s.Generation)))
	g.Expect(sidecarsOf(g, ns, "s")).To(Equal(&v1beta1.SidecarWorkloads{Outdated: 1, OutdatedWorkloads: []v1beta1.OutdatedWorkload{
		{Kind: "Deployment", Namespace: ns, Name: "web", Reason: ctrlinst.ReasonRestartDidNotInject}}}),
		"shard b reports it in its collector's status")
}
