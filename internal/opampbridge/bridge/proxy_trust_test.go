package bridge

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/internal/opampbridge/proxy"
)

// TestFloodDoesNotStarveReports: an agent on the proxy sends a new health every 10 ms for as
// long as the test runs; a collector created meanwhile must still reach the OpAMP server
// (issue 14, item 11). Before, every proxy change pushed the coalesced report back.
func TestFloodDoesNotStarveReports(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, "flood")
	srv := startServer(t)
	b := startBridge(t, testConfig(t, srv, "flood-bridge", "flood"), Options{})
	uid := connected(g, srv)

	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		agentUID := uuid.New()
		for i := uint64(1); ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			data, _ := proto.Marshal(&protobufs.AgentToServer{InstanceUid: agentUID[:], SequenceNum: i,
				Health: &protobufs.ComponentHealth{Healthy: true, Status: fmt.Sprint(i)}})
			resp, err := http.Post("http://"+b.proxyAddr+proxy.Path, "application/x-protobuf", bytes.NewReader(data))
			if err == nil {
				_ = resp.Body.Close()
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	createCollector(t, collectorYAML("flood", "late", map[string]string{collectors.ManagedLabel: "true"}))
	g.Expect(srv.Wait(10*time.Second, "the new collector reported during the flood", func(m map[string]*opamptest.AgentState) bool {
		return m[uid].EffectiveConfig.GetConfigMap().GetConfigMap()["flood/late"] != nil
	})).To(Succeed())
}
