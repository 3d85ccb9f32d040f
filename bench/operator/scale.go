package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/test/simcluster"
)

// scaleResult holds one run of the scale scenario (and of each run of the mcr study): mixed-mode
// collectors on an otherwise empty cluster, their convergence, writes and RSS, and the floor on a
// fresh cluster.
type scaleResult struct {
	Name          string   `json:"name"`
	Collectors    int      `json:"collectors"`
	Modes         []string `json:"modes"`
	Nodes         int      `json:"nodes"`
	OperatorArgs  string   `json:"operator_args,omitempty"`
	Workloads     int      `json:"workloads"`
	WorkloadPods  int      `json:"workload_pods"`
	LoadAtCreate  string   `json:"loadavg_at_collectors"`
	LoadAfter     string   `json:"loadavg_after_converge"`
	CreateSeconds float64  `json:"create_seconds"`

	AvailableSeconds float64    `json:"workloads_available_seconds"`
	ReadySeconds     float64    `json:"collectors_ready_seconds"`
	ConvergeWrites   writeCount `json:"converge_writes"`
	RSSConverging    rssStats   `json:"rss_while_converging"`
	RSSConverged     rssStats   `json:"rss_converged"`

	SidecarApps        int     `json:"sidecar_apps,omitempty"`
	SidecarInjected    int     `json:"sidecar_pods_injected,omitempty"`
	SidecarAppsSeconds float64 `json:"sidecar_apps_available_seconds,omitempty"`

	Churn *churnResult `json:"churn,omitempty"`

	ConvergeCPU cpuTimes    `json:"converge_cpu_seconds,omitempty"`
	Queue       *queueStats `json:"converge_workqueue,omitempty"`
	Timeline    *timeline   `json:"converge_timeline,omitempty"`
	FloorCPU    cpuTimes    `json:"floor_cpu_seconds,omitempty"`

	FloorObjects int     `json:"floor_objects,omitempty"`
	FloorSeconds float64 `json:"floor_seconds,omitempty"`
	LoadAtFloor  string  `json:"loadavg_at_floor,omitempty"`

	// FloorAll is the floor with every object the operator made for each workload (--floor-all).
	FloorAll *floorAllResult `json:"floor_all,omitempty"`
}

// floorAllResult is the --floor-all floor: the workloads with their ServiceAccounts, ConfigMaps,
// Services, PodDisruptionBudgets and NetworkPolicies, created directly on a fresh cluster.
type floorAllResult struct {
	Objects int      `json:"objects"`
	Seconds float64  `json:"seconds"`
	CPU     cpuTimes `json:"cpu_seconds,omitempty"`
	Load    string   `json:"loadavg"`
}

// scalePlan says which steps one run of the scale flow includes.
type scalePlan struct {
	collectors int
	churn      bool
	floor      bool
	sidecars   bool     // create the --sidecar-apps Deployments
	opArgs     []string // extra operator flags for this run
}

// scaleNodes is the fake node count: enough for the pods of the Deployments and StatefulSets at
// about 100 per node, plus two; DaemonSets add one pod per node, so this stays modest.
func scaleNodes(cfg config, collectors int) int {
	if cfg.scaleNodes > 0 {
		return cfg.scaleNodes
	}
	single := 0
	for i := range collectors {
		if m := scaleMode(i); m == "deployment" || m == "statefulset" {
			single++
		}
	}
	return (single+cfg.sidecarApps+99)/100 + 2
}

// runScale runs the scale flow: a fresh cluster, the operator, the collectors created W at a time
// until every workload is Available and every collector Ready, RSS, optionally the sidecar apps,
// the churn and the floor on another fresh cluster.
func runScale(ctx context.Context, cfg config, r *scaleResult, plan scalePlan) (err error) {
	b := &bench{cfg: cfg}
	b.cfg.operatorArg = append(append([]string{}, cfg.operatorArg...), plan.opArgs...)
	if cfg.cpuProfile != "" {
		b.pprofAddr = freeAddr()
		b.cfg.operatorArg = append(b.cfg.operatorArg, "--pprof-addr="+b.pprofAddr)
	}
	r.Collectors, r.Modes, r.OperatorArgs = plan.collectors, scaleModes, strings.Join(b.cfg.operatorArg, " ")
	r.Nodes = scaleNodes(cfg, plan.collectors)
	defer func() { b.stopAll(err) }()
	if err := b.startScaleCluster(ctx, r.Nodes); err != nil {
		return err
	}
	if err := b.startOperator(ctx); err != nil {
		return err
	}
	if err := b.warmWebhook(ctx, nil); err != nil {
		return err
	}
	if err := b.waitWorkers(ctx); err != nil {
		return err
	}
	if err := b.convergeMixed(ctx, r); err != nil {
		return err
	}
	if plan.sidecars && cfg.sidecarApps > 0 && plan.collectors >= 4 {
		if err := b.sidecarApps(ctx, r); err != nil {
			return err
		}
	}
	if plan.churn {
		r.Churn = &churnResult{}
		if err := b.churn(ctx, r, r.Churn); err != nil {
			return err
		}
	}
	if !plan.floor {
		return nil
	}
	captured, err := captureFloor(ctx, b.cs, cfg.floorAll)
	if err != nil {
		return err
	}
	fs, fsAll := captured.workloadsOnly(), captured
	if !cfg.floorAll {
		fsAll = nil
	}
	b.op.stop()
	b.op = nil
	_ = b.c.Stop()
	b.c = nil
	say("scale: operator and cluster stopped; the floor runs on a fresh cluster")
	if err := b.scaleFloor(ctx, r, fs); err != nil || fsAll == nil {
		return err
	}
	_ = b.c.Stop()
	b.c = nil
	say("scale: the floor with every object the operator made runs on another fresh cluster")
	return b.scaleFloor(ctx, r, fsAll)
}

// waitWorkers waits until the operator's collector controller has started its workers (its log
// says "Starting workers" once its caches have synced, which can be a second after /readyz and the
// webhooks answer), so that the clock of the creates does not include the operator's start.
func (b *bench) waitWorkers(ctx context.Context) error {
	log := filepath.Join(b.c.Dir, "logs", fmt.Sprintf("operator-%d.log", b.restarts))
	err := poll(ctx, 100*time.Millisecond, 60*time.Second, "the collector controller's workers", func(context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		data, err := os.ReadFile(log)
		if err != nil {
			return false, nil
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "Starting workers") && strings.Contains(line, `"opentelemetrycollector"`) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	say("the collector controller's workers started (%s after the operator)", time.Since(b.op.started).Round(100*time.Millisecond))
	return nil
}

// startScaleCluster starts a simulated cluster with nodes fake nodes, the clients, the CRDs and the
// webhooks.
func (b *bench) startScaleCluster(ctx context.Context, nodes int) (err error) {
	apiArgs := benchAPIServerArgs
	if b.cfg.apiProfile != "" {
		apiArgs = append(append([]string{}, apiArgs...), "--profiling=true")
	}
	b.c, err = simcluster.Start(ctx, simcluster.Options{Nodes: nodes, Audit: true, KeepDir: b.cfg.keep,
		APIServerArgs: apiArgs, ControllerManagerArgs: b.kcmArgs(), Progress: func(f string, a ...any) { say(f, a...) }})
	if err != nil {
		return err
	}
	rc, err := clientConfig(b.c)
	if err != nil {
		return err
	}
	if b.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	if b.cl, err = client.New(rc, client.Options{Scheme: s}); err != nil {
		return err
	}
	if _, err := simcluster.InstallCRDs(ctx, b.c.Config, b.cfg.crds, "bench"); err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(freeAddr())
	b.webhookPort, _ = strconv.Atoi(port)
	return simcluster.InstallWebhooks(ctx, b.c.Config, b.cfg.webhooks, b.webhookPort,
		[]string{"opentelemetrycollectors.opentelemetry.io"})
}

// scaleWant is the workloads the collectors should get, by namespace/name.
func scaleWant(cfg config, n int) map[string]bool {
	want := map[string]bool{}
	for i := range n {
		if scaleMode(i) != "sidecar" {
			want[collectorNS(i, cfg.colNS)+"/"+collectorName(i)+"-collector"] = true
		}
	}
	return want
}

// convergeMixed creates the mixed-mode collectors W at a time and waits until every workload is
// Available and every collector Ready=True; it counts the operator's writes and samples its RSS.
func (b *bench) convergeMixed(ctx context.Context, r *scaleResult) error {
	n := r.Collectors
	want := scaleWant(b.cfg, n)
	r.Workloads = len(want)
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	say("creating %d collectors (%s, in turn) in %d namespaces on %d fake nodes, %d at a time",
		n, strings.Join(scaleModes, ", "), b.cfg.colNS, r.Nodes, b.cfg.workers)
	r.LoadAtCreate = procstat.LoadAvg()
	cpu0, q0 := b.cpuNow(), b.op.queueStats(ctx)
	var profileDone func() error
	if b.pprofAddr != "" {
		profileDone = profileCPU(ctx, b.pprofAddr, b.cfg.profileFor, b.cfg.cpuProfile)
	}
	var apiProfileDone func() error
	if b.cfg.apiProfile != "" {
		apiProfileDone = b.profileAPIServer(ctx, b.cfg.profileFor, b.cfg.apiProfile)
	}
	start := time.Now()
	if err := parallel.Run(ctx, n, b.cfg.workers, func(ctx context.Context, i int) error {
		return b.cl.Create(ctx, collectorMode(collectorNS(i, b.cfg.colNS), collectorName(i), scaleMode(i)))
	}); err != nil {
		return fmt.Errorf("creating collectors: %w", err)
	}
	r.CreateSeconds = time.Since(start).Seconds()
	tAvail, tReady, err := b.waitConverged(ctx, start, want, n)
	if err != nil {
		return err
	}
	r.AvailableSeconds, r.ReadySeconds = tAvail.Seconds(), tReady.Seconds()
	r.ConvergeCPU = cpuSince(cpu0, b.cpuNow())
	q := b.op.queueStats(ctx).minus(q0)
	r.Queue = &q
	say("CPU from the first create to every collector Ready: %s", r.ConvergeCPU)
	say("operator work queues: %s", q)
	r.LoadAfter = procstat.LoadAvg()
	r.RSSConverging = rssWindow(b.op.rss, start, time.Now())
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
	say("writes to converge %d collectors: %s", n, perCollector(r.ConvergeWrites, n))
	if tl, err := readTimeline(b.c.AuditLog, off0); err == nil {
		r.Timeline = &tl
		say("audit timeline: %s", tl)
	}
	if apiProfileDone != nil {
		if err := apiProfileDone(); err != nil {
			say("CPU profile of kube-apiserver: %v", err)
		} else {
			say("CPU profile of kube-apiserver (%s from the first create): %s", b.cfg.profileFor, b.cfg.apiProfile)
		}
	}
	if profileDone != nil {
		if err := profileDone(); err != nil {
			say("CPU profile of the operator: %v", err)
		} else {
			say("CPU profile of the operator (%s from the first create): %s", b.cfg.profileFor, b.cfg.cpuProfile)
		}
	}
	if r.WorkloadPods, err = countPods(ctx, b.cs, operatorSelector); err != nil {
		return err
	}
	r.RSSConverged = b.settle(ctx, start)
	say("RSS while converging: median %.0f MiB, peak %.0f MiB; after (%s): steady %.0f MiB; %d collector pods",
		r.RSSConverging.SteadyMB, r.RSSConverged.PeakMB, b.cfg.settle, r.RSSConverged.SteadyMB, r.WorkloadPods)
	return nil
}

func countPods(ctx context.Context, cs kubernetes.Interface, selector string) (int, error) {
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	return len(pods.Items), nil
}

// perCollector gives "15.0 per collector: 3.00 events create, ..." for n collectors.
func perCollector(w writeCount, n int) string {
	if n == 0 || w.Total == 0 {
		return w.String()
	}
	keys := make([]string, 0, len(w.By))
	for k := range w.By {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if w.By[keys[i]] != w.By[keys[j]] {
			return w.By[keys[i]] > w.By[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%.2f %s", float64(w.By[k])/float64(n), k)
	}
	s := fmt.Sprintf("%d in total, %.2f per collector (%s)", w.Total, float64(w.Total)/float64(n), strings.Join(parts, ", "))
	if w.Failed > 0 {
		s += fmt.Sprintf(", %d of them failed", w.Failed)
	}
	return s
}

// scaleFloor starts a fresh cluster with the same nodes and creates the captured objects directly,
// W workloads at a time, until every workload is Available.
func (b *bench) scaleFloor(ctx context.Context, r *scaleResult, fs *floorSet) error {
	var err error
	// The audit log as on the operator's cluster: the same API server cost per request, and the
	// floor's writes by client.
	b.c, err = simcluster.Start(ctx, simcluster.Options{Nodes: r.Nodes, KeepDir: b.cfg.keep, Audit: true,
		APIServerArgs: benchAPIServerArgs, ControllerManagerArgs: b.kcmArgs(), Progress: func(f string, a ...any) { say(f, a...) }})
	if err != nil {
		return err
	}
	rc, err := clientConfig(b.c)
	if err != nil {
		return err
	}
	if b.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	for _, ns := range fs.namespaces {
		if err := ensureNamespace(ctx, b.cs, ns, map[string]string{benchLabel: "floor"}); err != nil {
			return err
		}
	}
	// The namespace's "default" ServiceAccount is made by the controller-manager; wait for it so
	// the timed creates never race the namespace's set-up.
	if err := poll(ctx, 500*time.Millisecond, b.cfg.timeout, "the floor namespaces' default ServiceAccounts", func(ctx context.Context) (bool, error) {
		for _, ns := range fs.namespaces {
			if _, err := b.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	say("floor: creating %d objects (%s; %d workloads) directly, %d collectors' objects at a time",
		fs.objects(), fs.what(), fs.workloads(), b.cfg.workers)
	load := procstat.LoadAvg()
	cpu0 := b.cpuNow()
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := parallel.Run(ctx, len(fs.items), b.cfg.workers, func(ctx context.Context, i int) error {
		return fs.items[i].create(ctx, b.cs)
	}); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	last := 0
	err = poll(ctx, 500*time.Millisecond, b.cfg.timeout, "the floor's workloads Available", func(ctx context.Context) (bool, error) {
		ws, err := listWorkloads(ctx, b.cs, operatorSelector)
		if err != nil {
			return false, nil
		}
		a := 0
		for _, it := range fs.items {
			if it.hasWorkload() && ws[it.key].Available {
				a++
			}
		}
		last = a
		return a == fs.workloads(), nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d/%d)", err, last, fs.workloads())
	}
	secs, cpu := time.Since(start).Seconds(), cpuSince(cpu0, b.cpuNow())
	say("floor CPU: %s", cpu)
	if tl, err := readTimeline(b.c.AuditLog, off0); err == nil {
		say("floor writes by client, resource and verb: %s", byCount(tl.ByAgentResource))
	}
	say("floor: %d workloads Available after %.1f s (operator: %.1f s, %.2fx)", fs.workloads(), secs,
		r.AvailableSeconds, r.AvailableSeconds/secs)
	if fs.all {
		r.FloorAll = &floorAllResult{Objects: fs.objects(), Seconds: secs, CPU: cpu, Load: load}
		return nil
	}
	r.FloorObjects, r.FloorSeconds, r.FloorCPU, r.LoadAtFloor = fs.objects(), secs, cpu, load
	if r.Churn != nil && len(r.Churn.keys) > 0 {
		return b.churnFloor(ctx, r.Churn)
	}
	return nil
}

// collectorMode is the sample collector (OTLP -> batch -> debug) in the given mode.
func collectorMode(ns, name, mode string) *unstructured.Unstructured {
	u := collector(ns, name)
	_ = unstructured.SetNestedField(u.Object, mode, "spec", "mode")
	return u
}

// waitConverged waits until every workload in want is Available and n collectors are Ready=True,
// and returns how long each took since start.
func (b *bench) waitConverged(ctx context.Context, start time.Time, want map[string]bool, n int) (time.Duration, time.Duration, error) {
	var tAvail, tReady time.Duration
	lastAvail, lastReady := -1, -1
	lastSay := time.Now()
	// Every poll decodes every workload (and collector): at 1,000 collectors that is CPU the
	// operator and the cluster would otherwise have, so poll less often there.
	every := 500 * time.Millisecond
	if n > 200 {
		every = time.Second
	}
	err := poll(ctx, every, b.cfg.timeout, "collectors to converge", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		if tAvail == 0 {
			ws, err := listWorkloads(ctx, b.cs, operatorSelector)
			if err != nil {
				return false, nil
			}
			a := 0
			for k, w := range ws {
				if want[k] && w.Available {
					a++
				}
			}
			if a == len(want) {
				tAvail = time.Since(start)
				say("all %d workloads Available after %s", a, tAvail.Round(100*time.Millisecond))
			}
			lastAvail = a
		}
		// A collector with a workload is Ready only once it is Available: count Ready after.
		if tReady == 0 && tAvail > 0 {
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
		if time.Since(lastSay) > 10*time.Second {
			say("  ... %d/%d workloads Available, %d/%d collectors Ready", lastAvail, len(want), lastReady, n)
			lastSay = time.Now()
		}
		return tAvail > 0 && tReady > 0, nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("%w (%d/%d workloads Available, %d/%d collectors Ready)", err, lastAvail, len(want), lastReady, n)
	}
	return tAvail, tReady, nil
}

// benchAPIServerArgs keep the audit log in one file: kube-apiserver rotates it at 100 MB by
// default, which a run with 1,000 collectors exceeds, and a rotated log loses the byte offsets
// the write counts rely on.
var benchAPIServerArgs = []string{"--audit-log-maxsize=100000"}

// withoutEndpointControllers turns off kube-controller-manager's Endpoints and EndpointSlice
// controllers. kwok gives pods loopback IPs, which Endpoints and EndpointSlice validation reject:
// with the controllers on, each collector Service costs a stream of failed writes (422), retries
// and Warning Events (measured at 100 collectors: about 2,700 failed endpoint writes and 1,500
// Event writes, three quarters of all writes in the window), which a real cluster, where the
// writes succeed once or twice per Service, does not pay, and which the floor (no Services) never
// sees.
var withoutEndpointControllers = []string{"--controllers=-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller"}

// kcmArgs are the simulated cluster's extra kube-controller-manager flags (--endpoint-controllers).
func (b *bench) kcmArgs() []string {
	if b.cfg.endpointControllers {
		return nil
	}
	return withoutEndpointControllers
}

// clientConfig is this harness's connection to c: its own request budget (the cluster's default
// of 200 QPS would slow the creates), and the certificates in memory, so that the client does
// not keep reloading them from the cluster's folder after that cluster is stopped and removed.
func clientConfig(c *simcluster.Cluster) (*rest.Config, error) {
	rc := rest.CopyConfig(c.Config)
	if err := rest.LoadTLSFiles(rc); err != nil {
		return nil, err
	}
	rc.CertFile, rc.KeyFile, rc.CAFile = "", "", ""
	rc.QPS, rc.Burst = 1000, 2000
	rc.UserAgent = "bench"
	return rc, nil
}
