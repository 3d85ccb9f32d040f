package instrumentation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	"github.com/otelop/otelop/internal/controller/owned"
	inst "github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
)

// TestInstrumentationWritesDoNotEachStartAScan is the attack of issue 29, finding 3: whoever may
// write an Instrumentation (its tenant) patches it over and over. The old controller started a
// full uncached scan of the cluster's workloads for every annotation change, whatever the
// annotation. A controller of its own (shard "burst", interval an hour, so that only events start
// scans) runs against the suite's API server:
//   - 90 writes the scan does not read (other annotations, labels, status) start no scan;
//   - 30 changes of an annotation it reads start at most one scan at once and one per coalescing
//     window after it, and a scan covers the last change;
//   - positive control: a spec change still starts the catch-up (the pods become Outdated).
func TestInstrumentationWritesDoNotEachStartAScan(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	const name, window = "catchup-burst", 2 * time.Second
	ns := newNamespace(t, nil)
	deployment(t, ns, "web", map[string]string{inst.InjectAnnotation(inst.Java): "instr"}, javaRecord(ns, "instr", 1))
	in := &v1alpha1.Instrumentation{}
	in.Namespace, in.Name, in.Labels = ns, "instr", map[string]string{owned.ShardLabel: "burst"}
	in.Spec.Exporter.Endpoint = "http://collector:4318"
	g.Expect(k8s.Create(ctx, in)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), in) })

	mgr := startBurstManager(t, ctx, cancel, ctrlinst.Options{Name: name, Interval: time.Hour, Coalesce: window,
		SkipNameValidation: true, RestartsPerMinute: -1})
	scans := func() float64 {
		n, err := testenv.ReconcileTotal(name)
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
	g.Eventually(func(g Gomega) *v1alpha1.InstrumentationWorkloads { return workloads(g, ns, "instr") }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(&v1alpha1.InstrumentationWorkloads{Instrumented: 1}))
	// seen waits until the controller's cache holds the Instrumentation as last written (its
	// events are then delivered), and a coalescing window more for a scan they would start.
	seen := func() {
		t.Helper()
		last := &v1alpha1.Instrumentation{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), last)).To(Succeed())
		g.Eventually(func(g Gomega) string {
			cached := &v1alpha1.Instrumentation{}
			g.Expect(mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(in), cached)).To(Succeed())
			return cached.ResourceVersion
		}).WithTimeout(timeout).WithPolling(poll).Should(Equal(last.ResourceVersion))
	}
	g.Eventually(scans).WithTimeout(timeout).WithPolling(poll).Should(BeNumerically(">=", 1))
	seen()
	g.Consistently(scans).WithTimeout(window+time.Second).WithPolling(poll).Should(Equal(scans()), "quiet before the attack")

	before := scans()
	for i := range 90 {
		switch i % 3 {
		case 0:
			setAnnotations(t, in, map[string]string{fmt.Sprintf("example.com/noise-%d", i): "x"})
		case 1:
			patch := client.MergeFrom(in.DeepCopy())
			in.Labels[fmt.Sprintf("noise-%d", i)] = "x"
			g.Expect(k8s.Patch(ctx, in, patch)).To(Succeed())
		default:
			patch := client.MergeFrom(in.DeepCopy())
			in.Status.Workloads = &v1alpha1.InstrumentationWorkloads{Instrumented: int32(100 + i)}
			g.Expect(k8s.Status().Patch(ctx, in, patch)).To(Succeed())
		}
	}
	seen()
	g.Consistently(scans).WithTimeout(window+time.Second).WithPolling(poll).Should(Equal(before), "writes the scan does not read")
	t.Logf("90 irrelevant writes: %.0f scans", scans()-before)

	// Changes the scan reads (the namespaces allowed to use the Instrumentation), in a burst; the
	// last one lets namespace "other" in, whose workload then shows in the status only if a scan
	// started after the last change (the first of the burst starts at once).
	other := newNamespace(t, map[string]string{inst.InjectAnnotation(inst.Java): ns + "/instr"})
	deployment(t, other, "web", nil, nil)
	before = scans()
	start := time.Now()
	for i := range 30 {
		allowed := fmt.Sprintf("team-%d", i)
		if i == 29 {
			allowed = other
		}
		setAnnotations(t, in, map[string]string{inst.AllowedNamespacesAnnotation: allowed})
	}
	elapsed := time.Since(start)
	g.Eventually(func(g Gomega) []v1alpha1.PendingWorkload { return workloads(g, ns, "instr").PendingWorkloads }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal([]v1alpha1.PendingWorkload{
		{Kind: "Deployment", Namespace: other, Name: "web", Reason: ctrlinst.ReasonNotInjected}}))
	n := settled(g, scans, window+time.Second) - before
	bound := float64(elapsed/window) + 2
	t.Logf("30 relevant changes in %s: %.0f scans (bound %.0f: one at once, then one a %s window)", elapsed, n, bound, window)
	g.Expect(n).To(BeNumerically("<=", bound))

	// Positive control: a spec change starts the catch-up.
	before = scans()
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), in)).To(Succeed())
	in.Spec.Exporter.Endpoint = "http://other:4318"
	g.Expect(k8s.Update(ctx, in)).To(Succeed())
	g.Eventually(func(g Gomega) []v1alpha1.PendingWorkload { return workloads(g, ns, "instr").PendingWorkloads }).
		WithTimeout(timeout).WithPolling(poll).Should(ContainElement(v1alpha1.PendingWorkload{
		Kind: "Deployment", Namespace: ns, Name: "web", Reason: ctrlinst.ReasonOutdated}))
	g.Expect(scans() - before).To(BeNumerically(">=", 1))
}

// settled waits until count has not changed for quiet and returns it.
func settled(g Gomega, count func() float64, quiet time.Duration) float64 {
	last, since := count(), time.Now()
	g.Eventually(func() time.Duration {
		if n := count(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since)
	}).WithTimeout(timeout).WithPolling(poll).Should(BeNumerically(">", quiet))
	return last
}

// startBurstManager runs a manager of its own with the catch-up controller on shard "burst"
// (opts.Shard is set here), stopped when the test ends.
func startBurstManager(t *testing.T, ctx context.Context, cancel context.CancelFunc, opts ctrlinst.Options) ctrl.Manager {
	t.Helper()
	shard, err := owned.ParseShard("burst")
	if err != nil {
		t.Fatal(err)
	}
	opts.Shard = shard
	skip := true
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 operator.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  operator.CacheOptions(nil),
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrlinst.SetupWithManager(mgr, opts); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	return mgr
}
