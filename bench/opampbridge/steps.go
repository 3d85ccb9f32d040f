package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/proc"
)

// bridgeNS is the namespace the bridge runs in (OTELCOL_NAMESPACE).
const bridgeNS = "opamp-bridge"

// bench is the state of one run, shared by its steps in the order run calls them.
type bench struct {
	o    options
	res  *results
	root string // the repository
	dir  string // the temporary folder: bridge binary, log, config file, kubeconfig

	bin        string // the bridge binary
	env        *testenv.Env
	kubeconfig string
	keys       []string // namespace/name of every collector
	srv        *opamptest.Server
	p          *bridgeProc
	uid        string // the bridge's instance UID on the OpAMP server

	reported time.Time // when the effective config first listed every collector
	pushed   time.Time // when the remote config was pushed
	cpu      float64   // the bridge's CPU seconds at the end of the last measuring step

	cleanups []func() // run in reverse order by cleanup
}

// onCleanup registers f to run at the end of the run, before the earlier registered ones.
func (b *bench) onCleanup(f func()) { b.cleanups = append(b.cleanups, f) }

// cleanup stops what the steps started, last started first.
func (b *bench) cleanup() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
}

// buildBridge builds ./cmd/operator-opamp-bridge into the temporary folder unless --bridge names a binary.
func (b *bench) buildBridge(ctx context.Context) error {
	b.bin = b.o.bridge
	if b.bin != "" {
		return nil
	}
	b.bin = filepath.Join(b.dir, "operator-opamp-bridge")
	say("building ./cmd/operator-opamp-bridge")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", b.bin, "-ldflags", "-X main.version=bench", "./cmd/operator-opamp-bridge")
	cmd.Dir = b.root
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the bridge: %w", err)
	}
	return nil
}

// startAPIServer starts kube-apiserver and etcd and writes a kubeconfig for the bridge's user.
func (b *bench) startAPIServer(context.Context) error {
	say("starting kube-apiserver and etcd (%s)", testenv.AssetsDir())
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		return err
	}
	b.env = env
	b.onCleanup(func() {
		say("stopping the API server")
		if serr := env.Stop(); serr != nil {
			say("stopping the API server: %v", serr)
		}
	})
	user, err := env.Environment.AddUser(envtest.User{Name: "opamp-bridge-bench", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding the bridge's user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	b.kubeconfig = filepath.Join(b.dir, "kubeconfig")
	return os.WriteFile(b.kubeconfig, kc, 0o600)
}

// createCollectors creates the namespaces and --collectors collectors spread over them.
func (b *bench) createCollectors(ctx context.Context) error {
	nss := []string{bridgeNS}
	for i := range b.o.namespaces {
		nss = append(nss, fmt.Sprintf("bench-%02d", i))
	}
	for _, ns := range nss {
		if err := b.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	b.keys = make([]string, b.o.collectors)
	for i := range b.keys {
		b.keys[i] = fmt.Sprintf("bench-%02d/col-%04d", i%b.o.namespaces, i)
	}
	say("creating %d collectors in %d namespaces", b.o.collectors, b.o.namespaces)
	start := time.Now()
	if err := createCollectors(ctx, b.env.Client, b.keys, b.o.workers); err != nil {
		return err
	}
	say("created in %s", time.Since(start).Round(10*time.Millisecond))
	return nil
}

// startBridge starts the OpAMP server and the bridge process pointed at it.
func (b *bench) startBridge(ctx context.Context) error {
	srv, err := opamptest.Start(opamptest.Options{})
	if err != nil {
		return err
	}
	b.srv = srv
	b.onCleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Stop(stopCtx)
	})
	cfgPath := filepath.Join(b.dir, "remoteconfiguration.yaml")
	var nss []string
	for i := range b.o.namespaces {
		nss = append(nss, fmt.Sprintf("bench-%02d", i))
	}
	if err := os.WriteFile(cfgPath, []byte(bridgeConfig(srv.URL, nss)), 0o600); err != nil {
		return err
	}
	listen, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	health, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	args := append([]string{"--config-file=" + cfgPath, "--kubeconfig-path=" + b.kubeconfig, "--name=opamp-bridge",
		"--listen-addr=" + listen, "--health-listen-addr=" + health, "--heartbeat-interval=" + b.o.heartbeat.String()},
		b.o.bridgeArgs...)
	logPath := filepath.Join(b.dir, "bridge.log")
	p, err := startBridge(b.bin, args, []string{"OTELCOL_NAMESPACE=" + bridgeNS}, logPath, health)
	if err != nil {
		return err
	}
	b.p = p
	b.onCleanup(func() {
		say("stopping the bridge (pid %d)", p.Pid())
		p.stop()
	})
	say("bridge started (pid %d); OpAMP server %s; health %s; log %s", p.Pid(), srv.URL, health, logPath)
	return nil
}

// measureReport (figure 1) waits for the bridge to connect, then for an effective config that
// lists every collector, and checks its files.
func (b *bench) measureReport(ctx context.Context) error {
	res, p, srv := b.res, b.p, b.srv
	if err := waitFor(ctx, srv, p, b.o.timeout, "the bridge to connect", func(m map[string]*opamptest.AgentState) bool { return len(m) > 0 }); err != nil {
		return err
	}
	res.ConnectS = time.Since(p.started).Seconds()
	uids := srv.Agents()
	if len(uids) != 1 {
		return fmt.Errorf("want one agent on the OpAMP server, got %d", len(uids))
	}
	b.uid = uids[0]
	say("connected after %.2f s (instance %s)", res.ConnectS, b.uid)
	err := waitFor(ctx, srv, p, b.o.timeout, fmt.Sprintf("an effective config listing all %d collectors", b.o.collectors),
		func(m map[string]*opamptest.AgentState) bool { return hasAll(m[b.uid], b.keys, "") })
	if err != nil {
		return err
	}
	b.reported = time.Now()
	res.ReportS = b.reported.Sub(p.started).Seconds()
	res.ReportCPU, _ = p.cpuSeconds()
	b.cpu = res.ReportCPU
	a := srv.Agent(b.uid)
	res.ReportMessages = len(a.Messages)
	files := a.EffectiveConfig.GetConfigMap().GetConfigMap()
	if len(files) != b.o.collectors {
		return fmt.Errorf("the effective config lists %d files, want exactly %d", len(files), b.o.collectors)
	}
	for k, f := range files {
		res.EffConfigBytes += len(k) + len(f.GetBody())
		if len(f.GetBody()) == 0 || f.GetContentType() == "" {
			return fmt.Errorf("effective config file %s has an empty body or content type", k)
		}
	}
	res.done = 1
	say("effective config with all %d collectors after %.2f s (%d messages)", b.o.collectors, res.ReportS, res.ReportMessages)
	return nil
}

// measureIdle (figure 2) idles for --idle and reads the bridge's RSS, Go heap and CPU.
func (b *bench) measureIdle(ctx context.Context) error {
	res, p := b.res, b.p
	say("idling %s", b.o.idle)
	if err := sleepAlive(ctx, p, b.o.idle); err != nil {
		return err
	}
	w, err := b.window(ctx, b.reported.Add(b.o.idle/2), p.started)
	if err != nil {
		return err
	}
	res.IdleRSSKiB, res.IdlePeakKiB, res.IdleHeapMiB, res.IdleCPU = w.steadyKiB, w.peakKiB, w.heapMiB, w.cpu
	res.done = 2
	say("idle RSS %s steady, %s peak", mib(res.IdleRSSKiB), mib(res.IdlePeakKiB))
	return nil
}

// window is what an idle phase measured of the bridge up to now: its steady RSS, its peak RSS,
// the Go heap in use and the CPU seconds used since the previous window.
type window struct {
	steadyKiB, peakKiB int64
	heapMiB, cpu       float64
}

// window reads the bridge's steady RSS since steadyFrom, its peak since peakFrom, its Go heap in
// use and the CPU seconds since the last window.
func (b *bench) window(ctx context.Context, steadyFrom, peakFrom time.Time) (window, error) {
	p := b.p
	end := time.Now()
	var w window
	w.steadyKiB, _, _ = p.rss.Window(steadyFrom, end)
	_, w.peakKiB, _ = p.rss.Window(peakFrom, end)
	heap, err := p.metric(ctx, "go_memstats_heap_inuse_bytes")
	if err != nil {
		return w, err
	}
	w.heapMiB = heap / (1 << 20)
	cpu, _ := p.cpuSeconds()
	w.cpu = cpu - b.cpu
	b.cpu = cpu
	return w, nil
}

// measureApply (figure 3) pushes a remote config with one file per collector, each adding a
// receiver, waits until the bridge reports APPLIED and its effective config shows every change,
// and checks every collector in the API server.
func (b *bench) measureApply(ctx context.Context) error {
	res, p, srv := b.res, b.p, b.srv
	remote := b.remoteConfig()
	res.LoadBeforeApply = procstat.LoadAvg()
	applySum0, _ := p.metric(ctx, "opamp_bridge_remote_config_apply_seconds_sum")
	say("pushing a %d-file remote config (%.1f KiB)", len(remote), float64(res.RemoteBytes)/1024)
	msgs0 := len(srv.Agent(b.uid).Messages)
	b.pushed = time.Now()
	hash, err := srv.PushConfig(ctx, b.uid, remote)
	if err != nil {
		return err
	}
	if err := b.waitApplied(ctx, hash); err != nil {
		return err
	}
	if err := waitFor(ctx, srv, p, b.o.timeout, "the effective config to show every change", func(m map[string]*opamptest.AgentState) bool {
		return hasAll(m[b.uid], b.keys, "otlp/2")
	}); err != nil {
		return err
	}
	res.ReflectS = time.Since(b.pushed).Seconds()
	for _, m := range srv.Agent(b.uid).Messages[msgs0:] {
		res.ApplyMessages++
		if m.EffectiveConfig != nil {
			res.ApplyEffConfigs++
		}
	}
	cpu, _ := p.cpuSeconds()
	res.ApplyCPU = cpu - b.cpu
	b.cpu = cpu
	applySum1, err := p.metric(ctx, "opamp_bridge_remote_config_apply_seconds_sum")
	if err != nil {
		return err
	}
	res.ApplyBridgeS = applySum1 - applySum0
	if err := checkApplied(ctx, b.env.Client, b.keys); err != nil {
		return err
	}
	res.done = 3
	say("effective config updated after %.2f s; all %d collectors changed in the API server", res.ReflectS, len(b.keys))
	return nil
}

// remoteConfig is one file per collector, each adding the receiver otlp/2; it counts its bytes.
func (b *bench) remoteConfig() map[string]*protobufs.AgentConfigFile {
	remote := map[string]*protobufs.AgentConfigFile{}
	for _, k := range b.keys {
		ns, name, _ := strings.Cut(k, "/")
		remote[k] = &protobufs.AgentConfigFile{Body: collectorYAML(ns, name, "otlp", "otlp/2"), ContentType: "text/yaml"}
		b.res.RemoteBytes += len(k) + len(remote[k].Body)
	}
	return remote
}

// waitApplied waits for the remote config status of hash and fails unless it is APPLIED.
func (b *bench) waitApplied(ctx context.Context, hash []byte) error {
	var st *protobufs.RemoteConfigStatus
	err := waitFor(ctx, b.srv, b.p, b.o.timeout, "the remote config status for the pushed hash", func(m map[string]*opamptest.AgentState) bool {
		s := m[b.uid].RemoteConfigStatus
		if s != nil && string(s.GetLastRemoteConfigHash()) == string(hash) &&
			s.GetStatus() != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING {
			st = s
			return true
		}
		return false
	})
	if err != nil {
		return err
	}
	b.res.ApplyS = time.Since(b.pushed).Seconds()
	if st.GetStatus() != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED {
		return fmt.Errorf("remote config status %s: %s", st.GetStatus(), firstLines(st.GetErrorMessage(), 10))
	}
	say("APPLIED after %.2f s", b.res.ApplyS)
	return nil
}

// measureAfter (figure 4) idles for --after and reads the bridge's RSS, Go heap and CPU.
func (b *bench) measureAfter(ctx context.Context) error {
	res, p := b.res, b.p
	say("idling %s", b.o.after)
	settled := time.Now()
	if err := sleepAlive(ctx, p, b.o.after); err != nil {
		return err
	}
	w, err := b.window(ctx, settled.Add(b.o.after/2), b.pushed)
	if err != nil {
		return err
	}
	res.AfterRSSKiB, res.AfterPeakKiB, res.AfterHeapMiB, res.AfterCPU = w.steadyKiB, w.peakKiB, w.heapMiB, w.cpu
	res.done = 4
	say("after the apply: RSS %s steady, %s peak", mib(res.AfterRSSKiB), mib(res.AfterPeakKiB))
	return nil
}
