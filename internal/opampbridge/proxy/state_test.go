package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"
)

// retained sums what the proxy keeps of its agents' reports: their effective configurations
// and health, in bytes.
func retained(s *Server) (agents int, bytes int) {
	for _, a := range s.Agents() {
		agents++
		bytes += proto.Size(a.EffectiveConfig) + proto.Size(a.Health)
	}
	return agents, bytes
}

// postFrom sends one message over a new HTTP connection from the loopback address src.
func postFrom(t *testing.T, s *Server, src string, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
	t.Helper()
	data, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	resp, err := c.Post("http://"+s.Addr()+Path, "application/x-protobuf", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	var out protobufs.ServerToAgent
	if resp.StatusCode == http.StatusOK {
		_ = proto.Unmarshal(buf.Bytes(), &out)
	}
	return &out
}

// TestOneClientCannotGrowState is the attack of issue 31, finding 5: one pod sends messages
// under the size limit, each with a new instance UID and a large effective configuration (before
// the fix, every one became an agent whose configuration the bridge kept and reported: 60
// agents and 90 MiB here). With the defaults, the agents one address creates are rate limited
// and an oversized configuration is not kept. The control: an agent from another address with
// a normal configuration is listed with it.
func TestOneClientCannotGrowState(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{})
	big := bytes.Repeat([]byte("a"), 3<<19) // 1.5 MiB
	for i := range 60 {
		uid := uuid.New()
		postFrom(t, s, "127.0.0.1", withConfig(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: description(fmt.Sprint("h", i))}, big))
	}
	agents, kept := retained(s)
	g.Expect(agents).To(BeNumerically("<=", DefaultNewAgentBurst+2), "agents created by one address (its burst, and what refills meanwhile)")
	g.Expect(kept).To(BeNumerically("<", 1<<20), "bytes of reports kept: configurations over DefaultMaxAgentBytes are not")
	g.Expect(s.StateBytes()).To(BeNumerically("<", 1<<20))

	uid := uuid.New()
	postFrom(t, s, "127.0.0.2", withConfig(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: description("good")}, []byte("receivers: {otlp: {}}")))
	var found bool
	for _, a := range s.Agents() {
		if a.HostName == "good" {
			found = true
			g.Expect(a.EffectiveConfig.GetBody()).To(Equal([]byte("receivers: {otlp: {}}")))
		}
	}
	g.Expect(found).To(BeTrue(), "an agent from another address is served")
}

// wsSend sends one OpAMP message over a raw WebSocket and reads the answer.
func wsSend(t *testing.T, c *websocket.Conn, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
	t.Helper()
	data, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(websocket.BinaryMessage, append([]byte{0}, data...)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var out protobufs.ServerToAgent
	if len(b) == 0 || proto.Unmarshal(b[1:], &out) != nil {
		t.Fatalf("bad answer %x", b)
	}
	return &out
}

// TestOneUIDPerConnection: one WebSocket connection cannot speak for many instance UIDs, and a
// second connection cannot take over the UID of a connected agent.
func TestOneUIDPerConnection(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{})
	dial := func() *websocket.Conn {
		c, _, err := websocket.DefaultDialer.DialContext(context.Background(), "ws://"+s.Addr()+Path, nil)
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c := dial()
	first := uuid.New()
	wsSend(t, c, &protobufs.AgentToServer{InstanceUid: first[:], SequenceNum: 1, AgentDescription: description("first")})
	for i := range 20 {
		uid := uuid.New()
		wsSend(t, c, &protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: uint64(i + 1), AgentDescription: description("other")})
	}
	g.Expect(s.Agents()).To(HaveLen(1))

	thief := dial()
	resp := wsSend(t, thief, &protobufs.AgentToServer{InstanceUid: first[:], SequenceNum: 2, AgentDescription: description("thief"),
		AgentDisconnect: nil})
	g.Expect(resp.GetErrorResponse()).NotTo(BeNil())
	wsSend(t, thief, &protobufs.AgentToServer{InstanceUid: first[:], SequenceNum: 3, AgentDisconnect: &protobufs.AgentDisconnect{}})
	agents := s.Agents()
	g.Expect(agents).To(HaveLen(1))
	g.Expect(agents[0].HostName).To(Equal("first"), "the UID stays with its connection")

	// The control: the agent itself goes on reporting.
	wsSend(t, c, &protobufs.AgentToServer{InstanceUid: first[:], SequenceNum: 2, Health: &protobufs.ComponentHealth{Healthy: true, Status: "ok"}})
	g.Expect(s.Agents()[0].Health.GetStatus()).To(Equal("ok"))
}

// TestStateIsBoundedInTotal: agents whose reports fit one by one are admitted, but what the
// proxy keeps of them all stays under MaxStateBytes (configurations that do not fit are dropped
// from the report), and the accounting returns to zero once they leave.
func TestStateIsBoundedInTotal(t *testing.T) {
	g := NewWithT(t)
	const limit = 4 << 20
	s := start(t, Options{MaxStateBytes: limit, NewAgentBurst: 100, MaxAgentsPerAddress: 30})
	cfg := bytes.Repeat([]byte("a"), 512<<10)
	var uids []uuid.UUID
	for range 40 {
		uid := uuid.New()
		resp := postFrom(t, s, "127.0.0.1", withConfig(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: description("h")}, cfg))
		if resp.GetErrorResponse() == nil {
			uids = append(uids, uid)
		}
	}
	agents, kept := retained(s)
	g.Expect(agents).To(Equal(30), "MaxAgentsPerAddress")
	g.Expect(kept).To(BeNumerically("<=", limit))
	g.Expect(s.StateBytes()).To(BeNumerically("<=", limit))
	withConfigs := 0
	for _, a := range s.Agents() {
		if a.EffectiveConfig != nil {
			withConfigs++
		}
	}
	g.Expect(withConfigs).To(BeNumerically("<", 8))
	for _, uid := range uids {
		postFrom(t, s, "127.0.0.1", &protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 2, AgentDisconnect: &protobufs.AgentDisconnect{}})
	}
	g.Expect(s.Agents()).To(BeEmpty())
	g.Expect(s.StateBytes()).To(BeZero())
}
