package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
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
	op          *operatorProc
	restarts    int
}

func runScenario(ctx context.Context, cfg config, r *scenarioResult) (err error) {
	b := &bench{cfg: cfg}
	defer func() {
		if b.op != nil {
			b.op.stop()
		}
		if b.c != nil {
			if cfg.keep || err != nil {
				say("cluster folder kept: %s (logs/, audit.log)", b.c.Dir)
			}
			_ = b.c.Stop()
			say("operator and cluster stopped")
		}
	}()
	b.c, err = simcluster.Start(ctx, simcluster.Options{Nodes: 3, Audit: true, KeepDir: cfg.keep,
		Progress: func(f string, a ...any) { say(f, a...) }})
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
	n, err := simcluster.InstallCRDs(ctx, b.c.Config, cfg.crds, "bench")
	if err != nil {
		return err
	}
	say("installed %d CRDs from %s", n, cfg.crds)
	_, port, _ := net.SplitHostPort(freeAddr())
	b.webhookPort, _ = strconv.Atoi(port)
	if err := simcluster.InstallWebhooks(ctx, b.c.Config, cfg.webhooks, b.webhookPort,
		[]string{"opentelemetrycollectors.opentelemetry.io"}); err != nil {
		return err
	}
	say("registered the webhooks at https://127.0.0.1:%d", b.webhookPort)

	// 1. Unrelated objects, then the operator with no collectors.
	nz := &noise{cs: b.cs, cluster: b.c, workers: cfg.workers * 2}
	r.NoiseSizes = nz.sizes()
	say("creating %d unrelated objects (%s)", r.Noise, r.NoiseSizes)
	if err := nz.add(ctx, r.Noise, cfg.timeout); err != nil {
		return err
	}
	if err := b.startOperator(ctx); err != nil {
		return err
	}
	r.RSSNoCollectors = b.settle(ctx, b.op.started)
	say("RSS with %d unrelated objects, no collectors: steady %.0f MiB, peak %.0f MiB", r.Noise,
		r.RSSNoCollectors.SteadyMB, r.RSSNoCollectors.PeakMB)

	// 2. Collectors: time to Deployments Available and to Ready=True.
	if err := b.warmWebhook(ctx); err != nil {
		return err
	}
	if err := b.convergeCollectors(ctx, r); err != nil {
		return err
	}

	// 3. Idle writes with default flags (RSS after convergence is sampled over this window).
	idleFrom := time.Now()
	r.IdleSeconds = cfg.idle.Seconds()
	w, recs, err := b.idleWindow(ctx, cfg.idle)
	if err != nil {
		return err
	}
	r.IdleWrites, r.IdleReconciles = w, recs
	r.RSSConverged = rssWindow(b.op.rss, idleFrom, time.Now())
	r.RSSConverged.PeakMB = max(r.RSSConverged.PeakMB, rssWindow(b.op.rss, b.op.started, time.Now()).PeakMB)
	say("RSS after convergence: steady %.0f MiB (median over the idle window), peak %.0f MiB since the start",
		r.RSSConverged.SteadyMB, r.RSSConverged.PeakMB)
	say("writes in %s of idling: %s; reconciles: %.0f", cfg.idle, w, recs)

	// 4. The floor: the same Deployments created directly.
	if err := b.floor(ctx, r); err != nil {
		return err
	}

	// 5. More unrelated objects, then a restart (RSS with everything in place, and restart writes).
	if r.ExtraNoise > 0 {
		from := time.Now()
		say("adding %d more unrelated objects (%d in total)", r.ExtraNoise, r.Noise+r.ExtraNoise)
		if err := nz.add(ctx, r.ExtraNoise, cfg.timeout); err != nil {
			return err
		}
		if err := b.op.alive(); err != nil {
			return err
		}
		r.RSSWhileAddingPeakMB = rssWindow(b.op.rss, from, time.Now()).PeakMB
		say("RSS peak while they were added: %.0f MiB", r.RSSWhileAddingPeakMB)
		off0, err := auditOffset(b.c.AuditLog)
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
		off1, err := auditOffset(b.c.AuditLog)
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
	}

	// 6. Resyncs: restart with --sync-period and count writes over the idle window.
	if cfg.syncPeriod > 0 {
		b.op.stop()
		if err := b.startOperator(ctx, "--sync-period="+cfg.syncPeriod.String()); err != nil {
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
		r.SyncPeriodSeconds = cfg.syncPeriod.Seconds()
		w, recs, err := b.idleWindow(ctx, cfg.idle)
		if err != nil {
			return err
		}
		r.ResyncWrites, r.ResyncReconciles = &w, recs
		say("with --sync-period=%s, writes in %s: %s; reconciles: %.0f (%.1f resyncs of %d collectors)",
			cfg.syncPeriod, cfg.idle, w, recs, recs/float64(r.Collectors), r.Collectors)
	}
	return nil
}

func (b *bench) startOperator(ctx context.Context, extra ...string) error {
	b.restarts++
	log := filepath.Join(b.c.Dir, "logs", fmt.Sprintf("operator-%d.log", b.restarts))
	common := simcluster.OperatorWebhookFlags(b.webhookPort, filepath.Join(b.c.Dir, "webhook-certs"), "default")
	var err error
	b.op, err = startOperator(ctx, b.cfg.operator, b.c.Kubeconfig, log, common,
		append(append([]string{}, b.cfg.operatorArg...), extra...), 90*time.Second)
	return err
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
func (b *bench) warmWebhook(ctx context.Context) error {
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
	off0, err := auditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	say("creating %d collectors in %d namespaces (%d concurrent requests)", n, len(namespaces), b.cfg.workers)
	r.LoadAtCollectors = procstat.LoadAvg()
	start := time.Now()
	if err := parallel(ctx, n, b.cfg.workers, func(ctx context.Context, i int) error {
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
	off1, err := auditOffset(b.c.AuditLog)
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
	off0, err := auditOffset(b.c.AuditLog)
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
	off1, err := auditOffset(b.c.AuditLog)
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
	if err := parallel(ctx, len(deps), b.cfg.workers, func(ctx context.Context, i int) error {
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

// printTables prints the comparison with upstream and the per-scenario details.
func printTables(w io.Writer, res *results) {
	m := res.Machine
	fmt.Fprintf(w, "Machine: %d CPUs, %s RAM, load average %s at the start and %s at the end; %s; operator %s%s\n\n",
		m.CPUs, m.MemTotal, m.LoadStart, m.LoadEnd, m.GoVersion, m.Commit, map[bool]string{true: " " + m.OperatorArgs, false: ""}[m.OperatorArgs != ""])
	var up, is *scenarioResult
	for _, s := range res.Scenarios {
		switch s.Name {
		case "upstream":
			up = s
		case "issue":
			is = s
		}
	}
	rss := func(st rssStats) string {
		if st.Samples == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f MiB steady, %.0f MiB peak", st.SteadyMB, st.PeakMB)
	}
	secs := func(f float64) string {
		if f == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f s", f)
	}
	if up != nil {
		fmt.Fprintln(w, "| figure | upstream v0.140.0 | this operator |")
		fmt.Fprintln(w, "| --- | --- | --- |")
		fmt.Fprintf(w, "| RSS with %d unrelated objects (%d ConfigMaps, Secrets and Pods each, ~2 KB), no collectors | 110 MB | %s |\n",
			up.Noise, up.Noise/3, rss(up.RSSNoCollectors))
		fmt.Fprintf(w, "| RSS after %d deployment-mode collectors converged | 120–123 MB | %s |\n", up.Collectors, rss(up.RSSConverged))
		if up.ExtraNoise > 0 {
			fmt.Fprintf(w, "| RSS with %d unrelated objects + %d collectors | 135 MB steady, 151 MB peak | %s after a restart (%.0f MiB peak while the objects were added) |\n",
				up.Noise+up.ExtraNoise, up.Collectors, rss(up.RSSAfterRestart), up.RSSWhileAddingPeakMB)
		}
		fmt.Fprintf(w, "| time from creating %d collectors to all their Deployments available | 20 s | %s (all collectors Ready=True: %s) |\n",
			up.Collectors, secs(up.AvailableSeconds), secs(up.ReadySeconds))
		fmt.Fprintf(w, "| the floor: the same %d Deployments created directly by a client | 2.9 s | %s |\n", up.Collectors, secs(up.FloorSeconds))
		fmt.Fprintf(w, "| API writes in %.0f s of idling with %d unchanged collectors | 777 (388 Service updates, 130 status patches, 130 Events, 129 Deployment updates) | %s (%.0f reconciles) |\n",
			up.IdleSeconds, up.Collectors, up.IdleWrites, up.IdleReconciles)
		if up.ResyncWrites != nil {
			fmt.Fprintf(w, "| API writes in %.0f s with --sync-period=%.0fs | n/a | %s (%.0f reconciles, %s per resync) |\n",
				up.IdleSeconds, up.SyncPeriodSeconds, *up.ResyncWrites, up.ResyncReconciles, perResync(up))
		}
		fmt.Fprintln(w)
	}
	if is != nil {
		fmt.Fprintf(w, "Issue 5 figures (%d unrelated objects + %d collectors):\n\n", is.Noise, is.Collectors)
		fmt.Fprintln(w, "| figure | this operator |")
		fmt.Fprintln(w, "| --- | --- |")
		fmt.Fprintf(w, "| RSS with %d unrelated objects, no collectors | %s |\n", is.Noise, rss(is.RSSNoCollectors))
		fmt.Fprintf(w, "| RSS after converging %d collectors | %s |\n", is.Collectors, rss(is.RSSConverged))
		fmt.Fprintf(w, "| time to converge %d collectors (Deployments Available / Ready=True) | %s / %s (floor %s) |\n",
			is.Collectors, secs(is.AvailableSeconds), secs(is.ReadySeconds), secs(is.FloorSeconds))
		fmt.Fprintf(w, "| writes to converge them | %s |\n", is.ConvergeWrites)
		fmt.Fprintf(w, "| writes in %.0f s of idling | %s (%.0f reconciles) |\n", is.IdleSeconds, is.IdleWrites, is.IdleReconciles)
		if is.ResyncWrites != nil {
			fmt.Fprintf(w, "| writes per no-op resync (--sync-period=%.0fs, %.0f s) | %s (%s writes, %.0f reconciles) |\n",
				is.SyncPeriodSeconds, is.IdleSeconds, perResync(is), *is.ResyncWrites, is.ResyncReconciles)
		}
		fmt.Fprintln(w)
	}
	for _, s := range res.Scenarios {
		fmt.Fprintf(w, "Scenario %s: noise %s; load average %s when the collectors were created, %s at the floor; creating the collectors took %.1f s; writes to converge: %s",
			s.Name, s.NoiseSizes, s.LoadAtCollectors, s.LoadAtFloor, s.CreateSeconds, s.ConvergeWrites)
		if s.RestartWrites != nil {
			fmt.Fprintf(w, "; on a restart: start-up reconciles done after %.1f s, writes: %s", s.RestartQuietSeconds, *s.RestartWrites)
		}
		fmt.Fprintln(w)
	}
}

func perResync(s *scenarioResult) string {
	if s.ResyncWrites == nil || s.ResyncReconciles == 0 {
		return "n/a"
	}
	resyncs := s.ResyncReconciles / float64(s.Collectors)
	return strconv.FormatFloat(float64(s.ResyncWrites.Total)/resyncs, 'f', -1, 64)
}
