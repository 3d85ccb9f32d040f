package bridge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"
	"k8s.io/client-go/rest"

	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/internal/opampbridge/proxy"
)

func httpStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// postAgent sends one agent message to a bridge's proxy and returns the HTTP status.
func postAgent(g Gomega, proxyAddr string, uid uuid.UUID, host string) int {
	data, err := proto.Marshal(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: &protobufs.AgentDescription{
		NonIdentifyingAttributes: []*protobufs.KeyValue{{Key: "host.name", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: host}}}},
	}})
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.Post("http://"+proxyAddr+proxy.Path, "application/x-protobuf", bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	return resp.StatusCode
}

// readyz returns the status and body of a bridge's /readyz.
func readyz(healthAddr string) (int, string) {
	resp, err := http.Get("http://" + healthAddr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestStandbyReadyOnlyTheLeaderServes runs two bridge replicas with leader election. Both are
// ready once synced (issue 31, finding 2: with only the leader ready, a Deployment of 2 replicas
// never rolls), and /readyz says which one serves; only the leader accepts agents on its proxy
// and reports them (issue 14, item 10), the standby answers 503 with Retry-After until it takes
// over.
func TestStandbyReadyOnlyTheLeaderServes(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, "ready")
	srv := startServer(t)
	lease := Options{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond}
	var bridges [2]*running
	for i := range bridges {
		cfg := testConfig(t, srv, "ready-bridge", "ready")
		cfg.LeaderElection = true
		bridges[i] = startBridge(t, cfg, lease)
	}
	bridgeUID := connected(g, srv)
	bodies := func(g Gomega) []string {
		var out []string
		for _, b := range bridges {
			code, body := readyz(b.healthAddr)
			g.Expect(code).To(Equal(http.StatusOK), "/readyz of every synced replica, leader or standby: %s", body)
			out = append(out, body)
		}
		return out
	}
	g.Eventually(bodies, wait).Should(ConsistOf(readyLeader, readyStandby))
	leader := 0
	if bodies(g)[1] == readyLeader {
		leader = 1
	}
	standby := 1 - leader

	refused := uuid.New()
	data, err := proto.Marshal(&protobufs.AgentToServer{InstanceUid: refused[:], SequenceNum: 1})
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.Post("http://"+bridges[standby].proxyAddr+proxy.Path, "application/x-protobuf", bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusServiceUnavailable), "the standby's proxy refuses agents")
	g.Expect(resp.Header.Get("Retry-After")).To(Equal(proxy.StandbyRetryAfter), "and tells them when to try again")
	agentUID := uuid.New()
	g.Expect(postAgent(g, bridges[leader].proxyAddr, agentUID, "pod-on-leader")).To(Equal(http.StatusOK))
	g.Expect(srv.Wait(wait, "the leader to report the agent", func(m map[string]*opamptest.AgentState) bool {
		return m[bridgeUID].Health.GetComponentHealthMap()[agentUID.String()] != nil
	})).To(Succeed())

	bridges[leader].stop(t)
	g.Eventually(func() string { _, body := readyz(bridges[standby].healthAddr); return body }, wait).Should(Equal(readyLeader))
	g.Expect(postAgent(g, bridges[standby].proxyAddr, uuid.New(), "pod")).To(Equal(http.StatusOK))
}

// TestNotHealthyBeforeSync: a bridge that cannot list collectors (here: a user without any
// permission) is not healthy, and gives up with an error after the sync timeout instead of
// waiting forever (issue 14, item 13).
func TestNotHealthyBeforeSync(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, "nosync")
	srv := startServer(t)
	cfg := testConfig(t, srv, "nosync", "nosync")
	rc := rest.CopyConfig(env.Config)
	rc.Impersonate = rest.ImpersonationConfig{UserName: "nobody-at-all"}
	healthAddr := make(chan string, 1)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- Run(ctx, cfg, rc, Options{Logger: testr.New(t), SyncTimeout: 3 * time.Second,
			Listening: func(_, h string) { healthAddr <- h }})
	}()
	addr := <-healthAddr
	g.Expect(httpStatus("http://" + addr + "/healthz")).To(Equal(http.StatusServiceUnavailable))
	g.Expect(httpStatus("http://" + addr + "/readyz")).To(Equal(http.StatusServiceUnavailable))
	select {
	case err := <-done:
		g.Expect(err).To(HaveOccurred())
		g.Expect(strings.Contains(err.Error(), "did not sync")).To(BeTrue(), err.Error())
	case <-time.After(wait):
		t.Fatal("Run still waits for the informers to sync")
	}
}
