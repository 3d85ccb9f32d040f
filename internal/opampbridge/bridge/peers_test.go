package bridge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/internal/testenv"
)

// TestRealCollectorThroughProxy runs a real collector (bin/tools/otelcol-opamp, built by
// hack/build-tools.sh otelcol) whose opamp extension connects to the bridge's proxy with
// HOSTNAME set to a collector pod's name; its health must appear under that pod and go when it
// exits.
func TestRealCollectorThroughProxy(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(), "bin", "tools", "otelcol-opamp")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not built; run hack/build-tools.sh otelcol (make test does)", bin)
	}
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "peers")
	createCollector(t, collectorYAML("peers", "gw", map[string]string{collectors.ManagedLabel: "true"}))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "peers", Name: "gw-collector-abc12", Labels: map[string]string{
			"app.kubernetes.io/component": "opentelemetry-collector", "app.kubernetes.io/instance": "peers.gw",
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "otc-container", Image: "otel/collector"}}},
	}
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now}
	g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())

	srv := startServer(t)
	b := startBridge(t, testConfig(t, srv, "peers-bridge", "peers"), Options{})
	g.Expect(srv.Wait(wait, "the bridge to connect", func(m map[string]*opamptest.AgentState) bool { return len(m) == 1 })).To(Succeed())
	uid := onlyAgent(g, srv)

	conf := filepath.Join(t.TempDir(), "otelcol.yaml")
	g.Expect(os.WriteFile(conf, fmt.Appendf(nil, `
extensions:
  opamp:
    server:
      ws:
        endpoint: ws://%s/v1/opamp
        tls: {insecure: true}
    # In a pod os.Hostname() is the pod name; here it is the machine's, so say it.
    agent_description:
      non_identifying_attributes: {host.name: "${env:HOSTNAME}"}
receivers:
  otlp: {protocols: {grpc: {endpoint: "127.0.0.1:%d"}}}
exporters:
  debug: {}
service:
  extensions: [opamp]
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], exporters: [debug]}
`, b.proxyAddr, testenv.FreePort(t)), 0o600)).To(Succeed())
	cmd := exec.Command(bin, "--config", conf)
	cmd.Env = append(os.Environ(), "HOSTNAME="+pod.Name)
	out, err := os.Create(filepath.Join(t.TempDir(), "otelcol.log"))
	g.Expect(err).NotTo(HaveOccurred())
	cmd.Stdout, cmd.Stderr = out, out
	g.Expect(cmd.Start()).To(Succeed())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			data, _ := os.ReadFile(out.Name())
			t.Logf("collector output:\n%s", data)
		}
	})

	podKey := "peers/" + pod.Name
	underPod := func(m map[string]*opamptest.AgentState) int {
		h := m[uid].Health.GetComponentHealthMap()["peers/gw"].GetComponentHealthMap()[podKey]
		return len(h.GetComponentHealthMap())
	}
	g.Expect(srv.Wait(wait, "the collector's health under its pod", func(m map[string]*opamptest.AgentState) bool { return underPod(m) == 1 })).To(Succeed(),
		func() string { return fmt.Sprintf("health: %v", srv.Agent(uid).Health) })
	g.Expect(srv.Wait(wait, "the collector's own config in the effective config", func(m map[string]*opamptest.AgentState) bool {
		for k := range m[uid].EffectiveConfig.GetConfigMap().GetConfigMap() {
			if !strings.Contains(k, "/") {
				return true // keyed by the collector's instance UID
			}
		}
		return false
	})).To(Succeed())

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	<-exited
	g.Expect(srv.Wait(wait, "the collector's health to go", func(m map[string]*opamptest.AgentState) bool { return underPod(m) == 0 })).To(Succeed())
}

// TestLeaderFailover runs two bridges with leader election: only one connects; when it stops, the
// other takes over with the same instance UID.
func TestLeaderFailover(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, "ha")
	srv := startServer(t)
	var connects [2]atomic.Int32
	lease := Options{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond}
	var bridges [2]*running
	for i := range bridges {
		cfg := testConfig(t, srv, "ha-bridge", "ha")
		cfg.LeaderElection = true
		o := lease
		o.OnConnect = func() { connects[i].Add(1) }
		bridges[i] = startBridge(t, cfg, o)
	}
	g.Eventually(func() int32 { return connects[0].Load() + connects[1].Load() }, wait).Should(Equal(int32(1)))
	g.Consistently(func() int32 { return connects[0].Load() + connects[1].Load() }, 2*time.Second).Should(Equal(int32(1)), "only the leader connects")
	leader := 0
	if connects[1].Load() == 1 {
		leader = 1
	}
	uids := srv.Agents()
	g.Expect(uids).To(HaveLen(1))
	bridges[leader].stop(t)
	g.Eventually(func() int32 { return connects[1-leader].Load() }, wait).Should(Equal(int32(1)), "the standby takes over")
	g.Expect(srv.Wait(wait, "the new leader to report", func(m map[string]*opamptest.AgentState) bool { return m[uids[0]].Connected })).To(Succeed())
	g.Expect(srv.Agents()).To(Equal(uids), "same instance UID after failover")
}
