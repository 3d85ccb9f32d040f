// Package opamptest is an OpAMP management server for tests, built on opamp-go's server package. It
// listens on 127.0.0.1 (or on Options.Addr: the real-node test's node address, inside its own
// network namespace), records every AgentToServer message, keeps each agent's latest reported
// state, and can push a remote configuration, send a restart command or drop a connection. Both
// transports are served on the same path: WebSocket and plain HTTP polling.
package opamptest

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server"
	"github.com/open-telemetry/opamp-go/server/types"
	"google.golang.org/protobuf/proto"
)

// AgentState is what the server knows about one agent, merged from all its messages (agents omit
// unchanged parts).
type AgentState struct {
	UID                []byte
	Description        *protobufs.AgentDescription
	Capabilities       uint64
	Health             *protobufs.ComponentHealth
	EffectiveConfig    *protobufs.EffectiveConfig
	RemoteConfigStatus *protobufs.RemoteConfigStatus
	Messages           []*protobufs.AgentToServer
	Connected          bool
	Disconnected       bool // agent_disconnect was received.
}

// Server is a running test OpAMP server.
type Server struct {
	srv server.OpAMPServer
	// URL is the WebSocket address (ws://127.0.0.1:port/v1/opamp).
	URL string
	// HTTPURL is the same endpoint for HTTP polling clients.
	HTTPURL string

	mu      sync.Mutex
	agents  map[string]*AgentState
	conns   map[string]types.Connection
	pending map[string]*protobufs.ServerToAgent // for HTTP agents: delivered on their next poll
	changed chan struct{}
	accept  func(*http.Request) bool
}

// Options tune the server.
type Options struct {
	// Accept decides whether a connection is accepted (e.g. to check headers); nil accepts all.
	Accept func(*http.Request) bool
	// TLS, when set, makes the server speak only TLS: URL is wss:// and HTTPURL https://.
	TLS *tls.Config
	// Addr is the address to listen on; empty means a free port on 127.0.0.1.
	Addr string
}

// Start runs a server on a free loopback port (or opts.Addr). Stop it with Stop (tests: t.Cleanup).
func Start(opts Options) (*Server, error) {
	s := &Server{
		srv:     server.New(nil),
		agents:  map[string]*AgentState{},
		conns:   map[string]types.Connection{},
		pending: map[string]*protobufs.ServerToAgent{},
		changed: make(chan struct{}),
		accept:  opts.Accept,
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	err := s.srv.Start(server.StartSettings{
		ListenEndpoint: addr,
		ListenPath:     "/v1/opamp",
		TLSConfig:      opts.TLS,
		Settings: server.Settings{Callbacks: types.Callbacks{
			OnConnecting: s.onConnecting,
		}},
	})
	if err != nil {
		return nil, err
	}
	addr = s.srv.Addr().String()
	s.URL = "ws://" + addr + "/v1/opamp"
	s.HTTPURL = "http://" + addr + "/v1/opamp"
	if opts.TLS != nil {
		s.URL = "wss://" + addr + "/v1/opamp"
		s.HTTPURL = "https://" + addr + "/v1/opamp"
	}
	return s, nil
}

// Stop shuts the server down.
func (s *Server) Stop(ctx context.Context) error { return s.srv.Stop(ctx) }

func (s *Server) onConnecting(r *http.Request) types.ConnectionResponse {
	if s.accept != nil && !s.accept(r) {
		return types.ConnectionResponse{Accept: false, HTTPStatusCode: http.StatusUnauthorized}
	}
	return types.ConnectionResponse{Accept: true, ConnectionCallbacks: types.ConnectionCallbacks{
		OnMessage:         s.onMessage,
		OnConnectionClose: s.onClose,
	}}
}

func uidKey(uid []byte) string { return fmt.Sprintf("%x", uid) }

func (s *Server) onMessage(_ context.Context, conn types.Connection, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := uidKey(msg.GetInstanceUid())
	a := s.agents[key]
	if a == nil {
		a = &AgentState{UID: msg.GetInstanceUid()}
		s.agents[key] = a
	}
	a.Messages = append(a.Messages, proto.Clone(msg).(*protobufs.AgentToServer))
	a.Connected = true
	a.Capabilities = msg.GetCapabilities()
	if msg.AgentDescription != nil {
		a.Description = msg.AgentDescription
	}
	if msg.Health != nil {
		a.Health = msg.Health
	}
	if msg.EffectiveConfig != nil {
		a.EffectiveConfig = msg.EffectiveConfig
	}
	if msg.RemoteConfigStatus != nil {
		a.RemoteConfigStatus = msg.RemoteConfigStatus
	}
	if msg.AgentDisconnect != nil {
		a.Disconnected = true
		a.Connected = false
	}
	s.conns[key] = conn
	resp := &protobufs.ServerToAgent{
		InstanceUid: msg.GetInstanceUid(),
		Capabilities: uint64(protobufs.ServerCapabilities_ServerCapabilities_AcceptsStatus |
			protobufs.ServerCapabilities_ServerCapabilities_OffersRemoteConfig |
			protobufs.ServerCapabilities_ServerCapabilities_AcceptsEffectiveConfig),
	}
	if p := s.pending[key]; p != nil {
		delete(s.pending, key)
		p.InstanceUid = msg.GetInstanceUid()
		p.Capabilities = resp.Capabilities
		resp = p
	}
	s.notify()
	return resp
}

func (s *Server) onClose(conn types.Connection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, c := range s.conns {
		if c == conn {
			delete(s.conns, k)
			if a := s.agents[k]; a != nil {
				a.Connected = false
			}
		}
	}
	s.notify()
}

// notify wakes waiters; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Agents returns the instance UIDs seen so far, as hex strings, sorted.
func (s *Server) Agents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.agents))
	for k := range s.agents {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Agent returns a copy of one agent's state (by hex UID), or nil.
func (s *Server) Agent(uid string) *AgentState {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[uid]
	if a == nil {
		return nil
	}
	c := *a
	c.Messages = append([]*protobufs.AgentToServer(nil), a.Messages...)
	return &c
}

// Wait blocks until cond holds for the server's agents or the timeout passes; it returns an error
// naming what was awaited.
func (s *Server) Wait(timeout time.Duration, what string, cond func(agents map[string]*AgentState) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond(s.agents)
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond):
		case <-deadline.C:
			return fmt.Errorf("opamptest: timed out after %s waiting for %s", timeout, what)
		}
	}
}

// ConfigHash is the hash the server puts on a remote config: SHA-256 over the sorted keys,
// bodies and content types.
func ConfigHash(files map[string]*protobufs.AgentConfigFile) []byte {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:%s%d:", len(k), k, len(files[k].Body), files[k].Body, len(files[k].ContentType))
		h.Write([]byte(files[k].ContentType))
	}
	return h.Sum(nil)
}

// PushConfig sends a remote configuration to the agent and returns its hash. WebSocket agents get
// it now; HTTP agents on their next poll.
func (s *Server) PushConfig(ctx context.Context, uid string, files map[string]*protobufs.AgentConfigFile) ([]byte, error) {
	hash := ConfigHash(files)
	msg := &protobufs.ServerToAgent{RemoteConfig: &protobufs.AgentRemoteConfig{
		Config:     &protobufs.AgentConfigMap{ConfigMap: files},
		ConfigHash: hash,
	}}
	return hash, s.send(ctx, uid, msg)
}

// SendCommand sends a restart command to the agent.
func (s *Server) SendCommand(ctx context.Context, uid string) error {
	return s.send(ctx, uid, &protobufs.ServerToAgent{Command: &protobufs.ServerToAgentCommand{
		Type: protobufs.CommandType_CommandType_Restart,
	}})
}

// Send sends any message to the agent.
func (s *Server) Send(ctx context.Context, uid string, msg *protobufs.ServerToAgent) error {
	return s.send(ctx, uid, msg)
}

func (s *Server) send(ctx context.Context, uid string, msg *protobufs.ServerToAgent) error {
	s.mu.Lock()
	conn := s.conns[uid]
	a := s.agents[uid]
	s.mu.Unlock()
	if conn == nil || a == nil {
		return fmt.Errorf("opamptest: agent %s is not connected", uid)
	}
	msg.InstanceUid = a.UID
	err := conn.Send(ctx, msg)
	if !errors.Is(err, server.ErrInvalidHTTPConnection) {
		return err
	}
	// HTTP connections cannot push: queue for the next poll.
	s.mu.Lock()
	s.pending[uid] = msg
	s.mu.Unlock()
	return nil
}

// Disconnect drops the agent's connection.
func (s *Server) Disconnect(uid string) error {
	s.mu.Lock()
	conn := s.conns[uid]
	s.mu.Unlock()
	if conn == nil {
		return errors.New("opamptest: agent not connected")
	}
	return conn.Disconnect()
}
