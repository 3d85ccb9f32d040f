package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/test/simcluster"
)

type scenarioResult struct {
	Name       string `json:"name"`
	Noise      int    `json:"noise"`
	ExtraNoise int    `json:"extra_noise,omitempty"`
	Collectors int    `json:"collectors"`
	NoiseSizes string `json:"noise_sizes"`

	RSSNoCollectors  rssStats   `json:"rss_no_collectors"`
	CreateSeconds    float64    `json:"create_seconds"`
	AvailableSeconds float64    `json:"deployments_available_seconds"`
	ReadySeconds     float64    `json:"collectors_ready_seconds"`
	ConvergeWrites   writeCount `json:"converge_writes"`
	RSSConverged     rssStats   `json:"rss_converged"`

	IdleSeconds    float64    `json:"idle_seconds"`
	IdleWrites     writeCount `json:"idle_writes"`
	IdleReconciles float64    `json:"idle_reconciles"`

	FloorSeconds float64 `json:"floor_seconds"`

	// Load averages when the timed phases started (the machine is shared).
	LoadAtCollectors string `json:"loadavg_at_collectors"`
	LoadAtFloor      string `json:"loadavg_at_floor"`

	RSSWhileAddingPeakMB float64     `json:"rss_while_adding_noise_peak_mb,omitempty"`
	RSSAfterRestart      rssStats    `json:"rss_after_restart"`
	RestartWrites        *writeCount `json:"restart_writes,omitempty"`
	RestartQuietSeconds  float64     `json:"restart_quiet_seconds,omitempty"`

	SyncPeriodSeconds float64     `json:"sync_period_seconds,omitempty"`
	ResyncWrites      *writeCount `json:"resync_writes,omitempty"`
	ResyncReconciles  float64     `json:"resync_reconciles,omitempty"`
}

// bench holds one scenario's cluster, clients and operator.
type bench struct {
	cfg         config
	c           *simcluster.Cluster
	cs          kubernetes.Interface
	cl          client.Client
	webhookPort int
	pprofAddr   string // the operator's --pprof-addr (--cpu-profile)
	op          *operatorProc
	restarts    int
	noise       *noise // the unrelated objects, added in steps 1 and 5
}

// runScenario runs one scenario's steps in order on a fresh simulated cluster and stops the
// operator and the cluster at the end; r holds the figures of the steps that completed.
func runScenario(ctx context.Context, cfg config, r *scenarioResult) (err error) {
	b := &bench{cfg: cfg}
	defer func() { b.stopAll(err) }()
	steps := []func(context.Context, *scenarioResult) error{
		b.startCluster,
		b.withoutCollectors,  // 1. unrelated objects, then the operator with no collectors
		b.warmWebhook,        // 2. collectors: time to Deployments Available and to Ready=True,
		b.convergeCollectors, //    once the API server reaches the webhooks
		b.idleAfterConverge,  // 3. idle writes with default flags, RSS after convergence
		b.floor,              // 4. the floor: the same Deployments created directly
		b.restartWithMore,    // 5. more unrelated objects, then a restart
		b.resyncs,            // 6. restart with --sync-period and count writes over the idle window
	}
	if r.Name == "bignoise" {
		// Only the memory with many unrelated objects: no floor, no restart, no resync window.
		steps = steps[:5]
	}
	for _, step := range steps {
		if err := step(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// startCluster starts the simulated cluster, this client's clients, and installs the CRDs and the
// webhook configurations (pointing at the port the operator will serve on).
func (b *bench) startCluster(ctx context.Context, _ *scenarioResult) (err error) {
	b.c, err = simcluster.Start(ctx, simcluster.Options{Nodes: 3, Audit: true, KeepDir: b.cfg.keep,
		APIServerArgs: benchAPIServerArgs, Progress: func(f string, a ...any) { say(f, a...) }})
	if err != nil {
		return err
	}
	// This client's own budget; the cluster's default (200 QPS) would make creating the noise slow.
	rc := rest.CopyConfig(b.c.Config)
	rc.QPS, rc.Burst = 1000, 2000
	rc.UserAgent = "bench"
	if b.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	if b.cl, err = client.New(rc, client.Options{Scheme: s}); err != nil {
		return err
	}
	n, err := simcluster.InstallCRDs(ctx, b.c.Config, b.cfg.crds, "bench")
	if err != nil {
		return err
	}
	say("installed %d CRDs from %s", n, b.cfg.crds)
	_, port, _ := net.SplitHostPort(freeAddr())
	b.webhookPort, _ = strconv.Atoi(port)
	if err := simcluster.InstallWebhooks(ctx, b.c.Config, b.cfg.webhooks, b.webhookPort,
		[]string{"opentelemetrycollectors.opentelemetry.io"}); err != nil {
		return err
	}
	say("registered the webhooks at https://127.0.0.1:%d", b.webhookPort)
	return nil
}

// withoutCollectors (step 1) creates the unrelated objects, starts the operator and samples its
// RSS with no collectors.
func (b *bench) withoutCollectors(ctx context.Context, r *scenarioResult) error {
	b.noise = &noise{cs: b.cs, cluster: b.c, workers: b.cfg.workers * 2}
	r.NoiseSizes = b.noise.sizes()
	say("creating %d unrelated objects (%s)", r.Noise, r.NoiseSizes)
	if err := b.noise.add(ctx, r.Noise, b.cfg.timeout); err != nil {
		return err
	}
	if err := b.startOperator(ctx); err != nil {
		return err
	}
	r.RSSNoCollectors = b.settle(ctx, b.op.started)
	say("RSS with %d unrelated objects, no collectors: steady %.0f MiB, peak %.0f MiB", r.Noise,
		r.RSSNoCollectors.SteadyMB, r.RSSNoCollectors.PeakMB)
	return nil
}

// idleAfterConverge (step 3) counts the writes and reconciles of --idle with default flags and
// samples the RSS after convergence over that window.
func (b *bench) idleAfterConverge(ctx context.Context, r *scenarioResult) error {
	idleFrom := time.Now()
	r.IdleSeconds = b.cfg.idle.Seconds()
	w, recs, err := b.idleWindow(ctx, b.cfg.idle)
	if err != nil {
		return err
	}
	r.IdleWrites, r.IdleReconciles = w, recs
	r.RSSConverged = rssWindow(b.op.rss, idleFrom, time.Now())
	r.RSSConverged.PeakMB = max(r.RSSConverged.PeakMB, rssWindow(b.op.rss, b.op.started, time.Now()).PeakMB)
	say("RSS after convergence: steady %.0f MiB (median over the idle window), peak %.0f MiB since the start",
		r.RSSConverged.SteadyMB, r.RSSConverged.PeakMB)
	say("writes in %s of idling: %s; reconciles: %.0f", b.cfg.idle, w, recs)
	return nil
}

// restartWithMore (step 5, with --extra-noise) adds more unrelated objects, then restarts the
// operator: RSS with everything in place, and the writes of a restart.
func (b *bench) restartWithMore(ctx context.Context, r *scenarioResult) error {
	if r.ExtraNoise <= 0 {
		return nil
	}
	from := time.Now()
	say("adding %d more unrelated objects (%d in total)", r.ExtraNoise, r.Noise+r.ExtraNoise)
	if err := b.noise.add(ctx, r.ExtraNoise, b.cfg.timeout); err != nil {
		return err
	}
	if err := b.op.alive(); err != nil {
		return err
	}
	r.RSSWhileAddingPeakMB = rssWindow(b.op.rss, from, time.Now()).PeakMB
	say("RSS peak while they were added: %.0f MiB", r.RSSWhileAddingPeakMB)
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	b.op.stop()
	if err := b.startOperator(ctx); err != nil {
		return err
	}
	if r.RestartQuietSeconds, err = b.waitQuiet(ctx); err != nil {
		return err
	}
	r.RSSAfterRestart = b.settle(ctx, b.op.started)
	if err := b.checkReady(ctx); err != nil {
		return err
	}
	off1, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	rw, err := countWrites(b.c.AuditLog, off0, off1, "opentelemetry-operator")
	if err != nil {
		return err
	}
	r.RestartWrites = &rw
	say("after a restart with %d unrelated objects + %d collectors: RSS steady %.0f MiB, peak %.0f MiB; writes from start to settled: %s",
		r.Noise+r.ExtraNoise, r.Collectors, r.RSSAfterRestart.SteadyMB, r.RSSAfterRestart.PeakMB, rw)
	return nil
}

// resyncs (step 6, with --sync-period) restarts the operator with --sync-period and counts the
// writes and reconciles over the idle window.
func (b *bench) resyncs(ctx context.Context, r *scenarioResult) error {
	if b.cfg.syncPeriod <= 0 {
		return nil
	}
	b.op.stop()
	if err := b.startOperator(ctx, "--sync-period="+b.cfg.syncPeriod.String()); err != nil {
		return err
	}
	// Start-up reconciles every collector once; they are not resyncs, so the window opens after.
	if _, err := b.waitQuiet(ctx); err != nil {
		return err
	}
	if err := sleep(ctx, 5*time.Second); err != nil {
		return err
	}
	if err := b.checkReady(ctx); err != nil {
		return err
	}
	r.SyncPeriodSeconds = b.cfg.syncPeriod.Seconds()
	w, recs, err := b.idleWindow(ctx, b.cfg.idle)
	if err != nil {
		return err
	}
	r.ResyncWrites, r.ResyncReconciles = &w, recs
	say("with --sync-period=%s, writes in %s: %s; reconciles: %.0f (%.1f resyncs of %d collectors)",
		b.cfg.syncPeriod, b.cfg.idle, w, recs, recs/float64(r.Collectors), r.Collectors)
	return nil
}

// stopAll stops the operator and the cluster, keeping the cluster's folder with --keep or when the
// scenario failed (err != nil).
func (b *bench) stopAll(err error) {
	if b.op != nil {
		b.op.stop()
	}
	if b.c != nil {
		if b.cfg.keep || err != nil {
			say("cluster folder kept: %s (logs/, audit.log)", b.c.Dir)
		}
		_ = b.c.Stop()
		say("operator and cluster stopped")
	}
}

// startOperator starts the operator (log operator-N.log for its Nth start) with the webhook flags,
// --operator-args and extra.
func (b *bench) startOperator(ctx context.Context, extra ...string) error {
	b.restarts++
	log := filepath.Join(b.c.Dir, "logs", fmt.Sprintf("operator-%d.log", b.restarts))
	common := simcluster.OperatorWebhookFlags(b.webhookPort, filepath.Join(b.c.Dir, "webhook-certs"), "default")
	var err error
	// The metrics and probe ports are picked free just before the start; on a shared machine
	// another process can take one first: then start again with new ones.
	for try := 0; ; try++ {
		b.op, err = startOperator(ctx, b.cfg.operator, b.c.Kubeconfig, log, common,
			append(append([]string{}, b.cfg.operatorArg...), extra...), 90*time.Second)
		if err == nil {
			err = b.op.metricsUp(ctx)
		}
		if err == nil || try == 2 || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		say("the operator lost a port to another process; starting it again")
	}
}

// settle samples RSS for --settle and returns the median of its second half and the peak since from.
func (b *bench) settle(ctx context.Context, from time.Time) rssStats {
	half := time.Now().Add(b.cfg.settle / 2)
	_ = sleep(ctx, b.cfg.settle)
	st := rssWindow(b.op.rss, half, time.Now())
	st.PeakMB = rssWindow(b.op.rss, from, time.Now()).PeakMB
	return st
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// warmWebhook waits until the API server can call the operator's webhooks (the operator injects the
// CA bundle after start), with server-side dry-run creates, so the timed creates never retry.
func (b *bench) warmWebhook(ctx context.Context, _ *scenarioResult) error {
	for i := range b.cfg.colNS {
		if err := ensureNamespace(ctx, b.cs, collectorNS(i, b.cfg.colNS), map[string]string{benchLabel: "collectors"}); err != nil {
			return err
		}
	}
	var lastErr error
	err := poll(ctx, 500*time.Millisecond, 60*time.Second, "the collector webhooks", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		lastErr = b.cl.Create(ctx, collector(collectorNS(0, b.cfg.colNS), "warm-up"), client.DryRunAll)
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last error: %v)", err, lastErr)
	}
	say("webhooks answer (dry-run create accepted)")
	return nil
}

func (b *bench) convergeCollectors(ctx context.Context, r *scenarioResult) error {
	n := b.cfg.collectors
	want := map[string]bool{}
	nsSet := map[string]bool{}
	for i := range n {
		want[collectorNS(i, b.cfg.colNS)+"/"+collectorName(i)+"-collector"] = true
		nsSet[collectorNS(i, b.cfg.colNS)] = true
	}
	var namespaces []string
	for ns := range nsSet {
		namespaces = append(namespaces, ns)
	}
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	say("creating %d collectors in %d namespaces (%d concurrent requests)", n, len(namespaces), b.cfg.workers)
	r.LoadAtCollectors = procstat.LoadAvg()
	start := time.Now()
	if err := parallel.Run(ctx, n, b.cfg.workers, func(ctx context.Context, i int) error {
		return b.cl.Create(ctx, collector(collectorNS(i, b.cfg.colNS), collectorName(i)))
	}); err != nil {
		return fmt.Errorf("creating collectors: %w", err)
	}
	r.CreateSeconds = time.Since(start).Seconds()
	var tAvail, tReady time.Duration
	lastAvail, lastReady := -1, -1
	lastSay := time.Now()
	err = poll(ctx, 250*time.Millisecond, b.cfg.timeout, "collectors to converge", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		if tAvail == 0 {
			a, err := countAvailable(ctx, b.cs, namespaces, want)
			if err != nil {
				return false, nil
			}
			if a == n {
				tAvail = time.Since(start)
				say("all %d collector Deployments Available after %s", n, tAvail.Round(100*time.Millisecond))
			}
			lastAvail = a
		}
		if tReady == 0 {
			rd, err := countReady(ctx, b.cl)
			if err != nil {
				return false, nil
			}
			if rd >= n {
				tReady = time.Since(start)
				say("all %d collectors Ready=True after %s", n, tReady.Round(100*time.Millisecond))
			}
			lastReady = rd
		}
		if time.Since(lastSay) > 5*time.Second {
			say("  ... %d/%d Deployments Available, %d/%d collectors Ready", lastAvail, n, lastReady, n)
			lastSay = time.Now()
		}
		return tAvail > 0 && tReady > 0, nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d/%d Deployments Available, %d/%d collectors Ready)", err, lastAvail, n, lastReady, n)
	}
	r.AvailableSeconds, r.ReadySeconds = tAvail.Seconds(), tReady.Seconds()
	// Count the writes it took, including what the operator still does right after Ready.
	if err := sleep(ctx, 5*time.Second); err != nil {
		return err
	}
	off1, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	if r.ConvergeWrites, err = countWrites(b.c.AuditLog, off0, off1, "opentelemetry-operator"); err != nil {
		return err
	}
	say("writes to converge %d collectors: %s", n, r.ConvergeWrites)
	return nil
}

// idleWindow counts the operator's writes and reconciles over d.
func (b *bench) idleWindow(ctx context.Context, d time.Duration) (writeCount, float64, error) {
	rec0, err := b.op.reconciles(ctx)
	if err != nil {
		return writeCount{}, 0, err
	}
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return writeCount{}, 0, err
	}
	say("idling %s (counting the operator's writes in the audit log)", d)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := b.op.alive(); err != nil {
			return writeCount{}, 0, err
		}
		if err := sleep(ctx, min(10*time.Second, time.Until(end))); err != nil {
			return writeCount{}, 0, err
		}
	}
	off1, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return writeCount{}, 0, err
	}
	rec1, err := b.op.reconciles(ctx)
	if err != nil {
		return writeCount{}, 0, err
	}
	w, err := countWrites(b.c.AuditLog, off0, off1, "opentelemetry-operator")
	return w, rec1 - rec0, err
}

// waitQuiet waits until the restarted operator has reconciled every collector once and its work
// queues are empty, and returns how long that took since it started.
func (b *bench) waitQuiet(ctx context.Context) (float64, error) {
	var recs, depth float64
	err := poll(ctx, time.Second, b.cfg.timeout, "the operator's start-up reconciles", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		var err1, err2 error
		recs, err1 = b.op.reconciles(ctx)
		depth, err2 = b.op.metricSum(ctx, "workqueue_depth")
		return err1 == nil && err2 == nil && recs >= float64(b.cfg.collectors) && depth == 0, nil
	})
	if err != nil {
		return 0, fmt.Errorf("%w (%.0f reconciles, queue depth %.0f)", err, recs, depth)
	}
	d := time.Since(b.op.started)
	say("operator done with start-up after %s (%.0f reconciles, queues empty)", d.Round(100*time.Millisecond), recs)
	return d.Seconds(), nil
}

func (b *bench) checkReady(ctx context.Context) error {
	return poll(ctx, time.Second, b.cfg.timeout, "every collector Ready=True", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		n, err := countReady(ctx, b.cl)
		return err == nil && n >= b.cfg.collectors, nil
	})
}

func (b *bench) floor(ctx context.Context, r *scenarioResult) error {
	var deps []*appsv1.Deployment
	want := map[string]bool{}
	nsSet := map[string]bool{}
	for i := range b.cfg.colNS {
		ns := collectorNS(i, b.cfg.colNS)
		list, err := b.cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=opentelemetry-operator"})
		if err != nil {
			return err
		}
		for j := range list.Items {
			d := floorDeployment(&list.Items[j])
			deps = append(deps, d)
			want[d.Namespace+"/"+d.Name] = true
			nsSet[ns] = true
		}
	}
	if len(deps) != b.cfg.collectors {
		return fmt.Errorf("floor: found %d operator Deployments, want %d", len(deps), b.cfg.collectors)
	}
	var namespaces []string
	for ns := range nsSet {
		namespaces = append(namespaces, ns)
	}
	say("floor: creating the same %d Deployments directly (%d concurrent requests)", len(deps), b.cfg.workers)
	r.LoadAtFloor = procstat.LoadAvg()
	start := time.Now()
	if err := parallel.Run(ctx, len(deps), b.cfg.workers, func(ctx context.Context, i int) error {
		_, err := b.cs.AppsV1().Deployments(deps[i].Namespace).Create(ctx, deps[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	var last atomic.Int64
	err := poll(ctx, 250*time.Millisecond, b.cfg.timeout, "the floor Deployments Available", func(ctx context.Context) (bool, error) {
		a, err := countAvailable(ctx, b.cs, namespaces, want)
		last.Store(int64(a))
		return err == nil && a == len(deps), nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d/%d)", err, last.Load(), len(deps))
	}
	r.FloorSeconds = time.Since(start).Seconds()
	say("floor: %d Deployments Available after %.1fs", len(deps), r.FloorSeconds)
	// Remove them so later phases see the same cluster as before.
	for _, ns := range namespaces {
		if err := b.cs.AppsV1().Deployments(ns).DeleteCollection(ctx, metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: benchLabel + "=floor"}); err != nil {
			return err
		}
	}
	return poll(ctx, time.Second, b.cfg.timeout, "the floor's pods to go", func(ctx context.Context) (bool, error) {
		pods, err := b.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: benchLabel + "=floor"})
		return err == nil && len(pods.Items) == 0, nil
	})
}
