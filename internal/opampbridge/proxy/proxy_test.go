package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/client"
	clienttypes "github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"
)

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	opts.Logger = logr.Discard()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	return s
}

func description(host string) *protobufs.AgentDescription {
	return &protobufs.AgentDescription{NonIdentifyingAttributes: []*protobufs.KeyValue{{
		Key: "host.name", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: host}},
	}}}
}

func withConfig(msg *protobufs.AgentToServer, body []byte) *protobufs.AgentToServer {
	msg.EffectiveConfig = &protobufs.EffectiveConfig{ConfigMap: &protobufs.AgentConfigMap{ConfigMap: map[string]*protobufs.AgentConfigFile{
		"": {Body: body, ContentType: "text/yaml"},
	}}}
	return msg
}

// post sends one message over plain HTTP, gzip-compressed if asked, and returns the status code
// and the decoded answer.
func post(t *testing.T, s *Server, msg *protobufs.AgentToServer, gz bool) (int, *protobufs.ServerToAgent) {
	t.Helper()
	data, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+Path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/x-protobuf")
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
		req, _ = http.NewRequest(http.MethodPost, "http://"+s.Addr()+Path, &buf)
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out protobufs.ServerToAgent
	if resp.StatusCode == http.StatusOK {
		if err := proto.Unmarshal(body, &out); err != nil {
			t.Fatalf("decoding the answer: %v", err)
		}
	}
	return resp.StatusCode, &out
}

// An instance UID that is not 16 bytes must never become a text key: "apps/x" would overwrite
// the collector apps/x in the bridge's effective configuration (issue 14, item 11).
func TestNonUUIDInstanceUIDIsNotAKey(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{})
	for _, uid := range []string{"apps/x", "01ARZ3NDEKTSV4RRFFQ69G5FAV"} {
		// A connection each: one connection speaks for one instance UID.
		resp := postFrom(t, s, "127.0.0.1", withConfig(&protobufs.AgentToServer{InstanceUid: []byte(uid), SequenceNum: 1, AgentDescription: description("h")}, []byte("x: 1")))
		g.Expect(resp.GetErrorResponse()).To(BeNil())
	}
	code, resp := post(t, s, &protobufs.AgentToServer{InstanceUid: bytes.Repeat([]byte("a"), MaxUIDBytes+1)}, false)
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(resp.GetErrorResponse().GetType()).To(Equal(protobufs.ServerErrorResponseType_ServerErrorResponseType_BadRequest))
	agents := s.Agents()
	g.Expect(agents).To(HaveLen(2))
	for _, a := range agents {
		g.Expect(a.UID).NotTo(ContainSubstring("/"))
		g.Expect(a.UID).NotTo(Equal("apps/x"))
		_, err := uuid.Parse(a.UID)
		g.Expect(err).To(HaveOccurred(), "cannot pass for another agent's UUID")
	}
}

// HTTP agents never close a connection: one that stops polling must be forgotten.
func TestHTTPAgentsExpire(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{HTTPAgentTTL: 200 * time.Millisecond})
	uid := uuid.New()
	code, _ := post(t, s, &protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: description("h")}, false)
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(s.Agents()).To(HaveLen(1))
	g.Eventually(s.Agents, 5*time.Second, 20*time.Millisecond).Should(BeEmpty())
}

// A gzip body that decompresses past the limit is refused before opamp-go inflates it.
func TestGzipBombRefused(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{MaxMessageBytes: 1 << 20})
	uid := uuid.New()
	msg := withConfig(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: description("h")}, make([]byte, 16<<20))
	code, _ := post(t, s, msg, true)
	g.Expect(code).To(Equal(http.StatusRequestEntityTooLarge))
	g.Expect(s.Agents()).To(BeEmpty())
	small := withConfig(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1, AgentDescription: description("h")}, []byte("x: 1"))
	code, _ = post(t, s, small, true)
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(s.Agents()).To(HaveLen(1))
}

// wsAgent connects an opamp-go WebSocket client whose first message carries an effective
// configuration of size bytes.
func wsAgent(t *testing.T, s *Server, size int) {
	t.Helper()
	c := client.NewWebSocket(nil)
	if err := c.SetAgentDescription(description("ws")); err != nil {
		t.Fatal(err)
	}
	caps := protobufs.AgentCapabilities_AgentCapabilities_ReportsEffectiveConfig
	if err := c.SetCapabilities(&caps); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("a"), size)
	err := c.Start(context.Background(), clienttypes.StartSettings{
		OpAMPServerURL: "ws://" + s.Addr() + Path,
		InstanceUid:    clienttypes.InstanceUid(uuid.New()),
		Callbacks: clienttypes.Callbacks{GetEffectiveConfig: func(context.Context) (*protobufs.EffectiveConfig, error) {
			return withConfig(&protobufs.AgentToServer{}, body).EffectiveConfig, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	})
}

// A WebSocket message over the limit drops the connection before it is read into memory; a
// small one is served.
func TestWebSocketMessageLimit(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{MaxMessageBytes: 1 << 20})
	configs := func() (n int) {
		for _, a := range s.Agents() {
			if a.EffectiveConfig != nil {
				n++
			}
		}
		return n
	}
	wsAgent(t, s, 2<<20)
	g.Consistently(configs, 2*time.Second, 50*time.Millisecond).Should(BeZero())
	wsAgent(t, s, 1000)
	g.Eventually(configs, 5*time.Second, 20*time.Millisecond).Should(Equal(1))
}

// An agent flooding the proxy gets Unavailable once over its burst, and its excess messages do
// not signal changes.
func TestFloodIsRateLimited(t *testing.T) {
	g := NewWithT(t)
	s := start(t, Options{MessagesPerSecond: 5, MessageBurst: 10})
	uid := uuid.New()
	var signals atomic.Int32
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-s.Changes():
				signals.Add(1)
			case <-stop:
				return
			}
		}
	}()
	unavailable := 0
	for i := range 100 {
		msg := &protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: uint64(i + 1), AgentDescription: description("h"),
			Health: &protobufs.ComponentHealth{Healthy: true, Status: fmt.Sprint(i)}}
		_, resp := post(t, s, msg, false)
		if resp.GetErrorResponse().GetType() == protobufs.ServerErrorResponseType_ServerErrorResponseType_Unavailable {
			unavailable++
			g.Expect(resp.GetErrorResponse().GetRetryInfo().GetRetryAfterNanoseconds()).To(BeNumerically(">", 0))
		}
	}
	g.Expect(unavailable).To(BeNumerically(">=", 80))
	g.Expect(s.Agents()[0].Health.GetStatus()).NotTo(Equal("99"), "dropped messages are not processed")
}

// A standby (Serving false) answers 503 so that agents go to the leader.
func TestStandbyRefuses(t *testing.T) {
	g := NewWithT(t)
	var serving atomic.Bool
	s := start(t, Options{Serving: serving.Load})
	uid := uuid.New()
	code, _ := post(t, s, &protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1}, false)
	g.Expect(code).To(Equal(http.StatusServiceUnavailable))
	serving.Store(true)
	code, _ = post(t, s, &protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1}, false)
	g.Expect(code).To(Equal(http.StatusOK))
}
