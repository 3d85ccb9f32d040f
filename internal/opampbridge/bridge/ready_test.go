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

// TestOnlyTheLeaderServes runs two bridge replicas with leader election (issue 14, item 10): only
// the leader is ready (/readyz, the Service's readiness) and accepts agents on its proxy, and
// the agents it accepts are reported; the standby refuses them until it takes over.
func TestOnlyTheLeaderServes(t *testing.T) {
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
	g.Eventually(func() []int {
		return []int{httpStatus("http://" + bridges[0].healthAddr + "/healthz"), httpStatus("http://" + bridges[1].healthAddr + "/healthz")}
	}, wait).Should(Equal([]int{http.StatusOK, http.StatusOK}), "both alive and synced")
	ready := func() []int {
		return []int{httpStatus("http://" + bridges[0].healthAddr + "/readyz"), httpStatus("http://" + bridges[1].healthAddr + "/readyz")}
	}
	g.Eventually(ready, wait).Should(ConsistOf(http.StatusOK, http.StatusServiceUnavailable))
	leader := 0
	if ready()[1] == http.StatusOK {
		leader = 1
	}
	standby := 1 - leader
	g.Expect(httpStatus("http://"+bridges[standby].healthAddr+"/healthz")).To(Equal(http.StatusOK), "the standby is alive")

	g.Expect(postAgent(g, bridges[standby].proxyAddr, uuid.New(), "pod-on-standby")).To(Equal(http.StatusServiceUnavailable))
	agentUID := uuid.New()
	g.Expect(postAgent(g, bridges[leader].proxyAddr, agentUID, "pod-on-leader")).To(Equal(http.StatusOK))
	g.Expect(srv.Wait(wait, "the leader to report the agent", func(m map[string]*opamptest.AgentState) bool {
		return m[bridgeUID].Health.GetComponentHealthMap()[agentUID.String()] != nil
	})).To(Succeed())

	bridges[leader].stop(t)
	g.Eventually(func() int { return httpStatus("http://" + bridges[standby].healthAddr + "/readyz") }, wait).Should(Equal(http.StatusOK))
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
