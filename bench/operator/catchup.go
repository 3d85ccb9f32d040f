package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/test/simcluster"
)

// catchupResult holds the figures of the catch-up scenario: the instrumentation catch-up
// controller's memory and scan cost with many pods that ask for instrumentation.
type catchupResult struct {
	Pods         int     `json:"pods"`
	Deployments  int     `json:"deployments"`
	Namespaces   int     `json:"namespaces"`
	ScanInterval float64 `json:"scan_interval_seconds"`

	PodsRunningSeconds float64    `json:"pods_running_seconds"`
	RSSOff             rssStats   `json:"rss_controller_off"`
	ReportSeconds      float64    `json:"report_seconds"`
	RSSOn              rssStats   `json:"rss_controller_on"`
	ScanSeconds        float64    `json:"last_scan_seconds"`
	ScanRequests       float64    `json:"last_scan_list_requests"`
	ScanPods           float64    `json:"last_scan_pods"`
	Pending            float64    `json:"pending_workloads"`
	WindowSeconds      float64    `json:"window_seconds"`
	WindowScans        float64    `json:"window_scans"`
	WindowWrites       writeCount `json:"window_writes"`
}

const catchupController = "instrumentation-catchup"

// runCatchup: Deployments whose pods ask for Java instrumentation are created while the operator
// is down (their pods carry no injection record), then the operator starts, first with the
// catch-up controller off (--instrumentation-scan-interval=0: the baseline), then on, and an
// Instrumentation is created in each namespace. Every Deployment is then pending: the scans read
// every pod's metadata, every interval.
func runCatchup(ctx context.Context, cfg config, r *catchupResult) (err error) {
	b := &bench{cfg: cfg}
	defer func() { b.stopAll(err) }()
	steps := []func(context.Context, *catchupResult) error{
		b.startCatchupCluster,
		b.createCatchupDeployments, // 1. Deployments (the controller-manager creates their ReplicaSets and pods)
		b.catchupOff,               // 2. the baseline: the operator without the catch-up controller
		b.catchupReport,            // 3. with the controller: time to report every Deployment
		b.catchupWindow,            // 4. several scans: RSS, scan cost, writes
	}
	for _, step := range steps {
		if err := step(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// startCatchupCluster starts a simulated cluster with a node per 1800 pods, this client's
// clients, the CRDs and the webhook configurations.
func (b *bench) startCatchupCluster(ctx context.Context, r *catchupResult) (err error) {
	nodes := r.Pods/1800 + 1
	b.c, err = simcluster.Start(ctx, simcluster.Options{Nodes: nodes, Audit: true, KeepDir: b.cfg.keep,
		APIServerArgs: benchAPIServerArgs, Progress: func(f string, a ...any) { say(f, a...) }})
	if err != nil {
		return err
	}
	rc := rest.CopyConfig(b.c.Config)
	rc.QPS, rc.Burst = 1000, 2000
	rc.UserAgent = "bench"
	if b.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	if b.cl, err = client.New(rc, client.Options{}); err != nil {
		return err
	}
	if _, err := simcluster.InstallCRDs(ctx, b.c.Config, b.cfg.crds, "bench"); err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(freeAddr())
	b.webhookPort, _ = strconv.Atoi(port)
	// The webhooks are registered while the operator is down (failurePolicy Ignore): the pods are
	// admitted without instrumentation, as in upstream's #1329.
	return simcluster.InstallWebhooks(ctx, b.c.Config, b.cfg.webhooks, b.webhookPort, nil)
}

// createCatchupDeployments (step 1) creates the Deployments and waits for all their pods.
func (b *bench) createCatchupDeployments(ctx context.Context, r *catchupResult) error {
	perDep := r.Pods / r.Deployments
	start := time.Now()
	for i := range r.Namespaces {
		if err := ensureNamespace(ctx, b.cs, catchupNS(i), map[string]string{benchLabel: "catchup"}); err != nil {
			return err
		}
	}
	say("creating %d Deployments of %d replicas (inject-java: true) in %d namespaces", r.Deployments, perDep, r.Namespaces)
	err := parallel.Run(ctx, r.Deployments, b.cfg.workers, func(ctx context.Context, i int) error {
		_, err := b.cs.AppsV1().Deployments(catchupNS(i%r.Namespaces)).Create(ctx, catchupDeployment(i, perDep), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	last := -1
	err = poll(ctx, 2*time.Second, 3*b.cfg.timeout, "catch-up Deployments available", func(ctx context.Context) (bool, error) {
		list, err := b.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: benchLabel + "=catchup"})
		if err != nil {
			return false, nil
		}
		available := 0
		for _, d := range list.Items {
			available += int(d.Status.AvailableReplicas)
		}
		if available/1000 != last {
			say("  ... %d/%d pods available", available, r.Pods)
			last = available / 1000
		}
		return len(list.Items) == r.Deployments && available >= perDep*r.Deployments, nil
	})
	if err != nil {
		return err
	}
	r.PodsRunningSeconds = time.Since(start).Seconds()
	say("%d pods Running after %.0f s", r.Pods, r.PodsRunningSeconds)
	return nil
}

// catchupOff (step 2) samples the RSS of the operator without the catch-up controller, then stops it.
func (b *bench) catchupOff(ctx context.Context, r *catchupResult) error {
	if err := b.startOperator(ctx, "--instrumentation-scan-interval=0"); err != nil {
		return err
	}
	r.RSSOff = b.settle(ctx, b.op.started)
	say("RSS with the catch-up controller off: steady %.0f MiB, peak %.0f MiB", r.RSSOff.SteadyMB, r.RSSOff.PeakMB)
	b.op.stop()
	return nil
}

// catchupReport (step 3) starts the operator with the catch-up controller, creates an
// Instrumentation per namespace and measures the time until every Deployment is reported pending.
func (b *bench) catchupReport(ctx context.Context, r *catchupResult) error {
	interval := time.Duration(r.ScanInterval * float64(time.Second))
	if err := b.startOperator(ctx, "--instrumentation-scan-interval="+interval.String()); err != nil {
		return err
	}
	created := time.Now()
	for i := range r.Namespaces {
		in := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation",
			"metadata": map[string]any{"name": "java", "namespace": catchupNS(i)},
			"spec":     map[string]any{"exporter": map[string]any{"endpoint": "http://collector:4318"}},
		}}
		if err := poll(ctx, time.Second, b.cfg.timeout, "creating an Instrumentation", func(ctx context.Context) (bool, error) {
			err := b.cl.Create(ctx, in.DeepCopy())
			return err == nil || apierrors.IsAlreadyExists(err), nil
		}); err != nil {
			return err
		}
	}
	err := poll(ctx, time.Second, b.cfg.timeout, "every Deployment reported pending", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		n, err := b.op.metricSum(ctx, "otelop_instrumentation_pending_workloads")
		return err == nil && int(n) >= r.Deployments, nil
	})
	if err != nil {
		return err
	}
	r.ReportSeconds = time.Since(created).Seconds()
	say("every Deployment reported pending %.1f s after the Instrumentations were created", r.ReportSeconds)
	return nil
}

// catchupWindow (step 4) lets several scans run for --idle: RSS, scan cost and writes (none
// expected: nothing changes).
func (b *bench) catchupWindow(ctx context.Context, r *catchupResult) error {
	if err := sleep(ctx, 2*time.Second); err != nil {
		return err
	}
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	scans0, _ := b.op.metricSum(ctx, `controller_runtime_reconcile_total{controller="`+catchupController+`"`)
	from := time.Now()
	if err := sleep(ctx, b.cfg.idle); err != nil {
		return err
	}
	off1, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	scans1, _ := b.op.metricSum(ctx, `controller_runtime_reconcile_total{controller="`+catchupController+`"`)
	r.WindowSeconds, r.WindowScans = time.Since(from).Seconds(), scans1-scans0
	if r.WindowWrites, err = countWrites(b.c.AuditLog, off0, off1, "opentelemetry-operator"); err != nil {
		return err
	}
	r.RSSOn = rssWindow(b.op.rss, from, time.Now())
	r.RSSOn.PeakMB = rssWindow(b.op.rss, b.op.started, time.Now()).PeakMB
	r.ScanSeconds, _ = b.op.metricSum(ctx, "otelop_instrumentation_scan_duration_seconds")
	r.ScanRequests, _ = b.op.metricSum(ctx, "otelop_instrumentation_scan_list_requests")
	r.ScanPods, _ = b.op.metricSum(ctx, "otelop_instrumentation_scan_pods")
	r.Pending, _ = b.op.metricSum(ctx, "otelop_instrumentation_pending_workloads")
	say("RSS with the catch-up controller on: steady %.0f MiB (over %.0f scans), peak %.0f MiB; last scan %.2f s, %.0f list requests, %.0f pods; writes: %s",
		r.RSSOn.SteadyMB, r.WindowScans, r.RSSOn.PeakMB, r.ScanSeconds, r.ScanRequests, r.ScanPods, r.WindowWrites)
	return nil
}

func catchupNS(i int) string { return fmt.Sprintf("bench-catchup-%02d", i) }

// catchupDeployment asks for Java instrumentation; its pods carry a 1 KB annotation (pod metadata
// is what the scan reads, so this is on the heavy side of real pods).
func catchupDeployment(i, replicas int) *appsv1.Deployment {
	labels := map[string]string{benchLabel: "catchup", "app": fmt.Sprintf("app-%03d", i)}
	rep := int32(replicas)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &rep,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"instrumentation.opentelemetry.io/inject-java": "true",
					"bench.otelop.io/payload":                      payload(i, 1000),
				}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/catchup/app:1.0.0",
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}},
					Tolerations: []corev1.Toleration{{Key: noiseNodeTaint, Operator: corev1.TolerationOpExists}},
				},
			},
		},
	}
}

// printCatchup prints the catch-up scenario's table.
func printCatchup(w io.Writer, r *catchupResult) {
	fmt.Fprintf(w, "Catch-up figures (%d pods of %d Deployments asking for Java instrumentation, in %d namespaces with an Instrumentation each; scan every %.0f s):\n\n",
		r.Pods, r.Deployments, r.Namespaces, r.ScanInterval)
	fmt.Fprintln(w, "| figure | this operator |")
	fmt.Fprintln(w, "| --- | --- |")
	fmt.Fprintf(w, "| RSS, catch-up controller off (--instrumentation-scan-interval=0) | %.0f MiB steady, %.0f MiB peak |\n", r.RSSOff.SteadyMB, r.RSSOff.PeakMB)
	fmt.Fprintf(w, "| RSS, catch-up controller on, over %.0f scans | %.0f MiB steady, %.0f MiB peak |\n", r.WindowScans, r.RSSOn.SteadyMB, r.RSSOn.PeakMB)
	fmt.Fprintf(w, "| one scan: duration / list requests / pods read | %.2f s / %.0f / %.0f |\n", r.ScanSeconds, r.ScanRequests, r.ScanPods)
	fmt.Fprintf(w, "| from creating the Instrumentations to all %d Deployments reported pending | %.1f s (%.0f pending) |\n", r.Deployments, r.ReportSeconds, r.Pending)
	fmt.Fprintf(w, "| writes during %.0f s of unchanged scans | %s |\n", r.WindowSeconds, r.WindowWrites)
	fmt.Fprintln(w)
}
