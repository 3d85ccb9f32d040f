// Package proxy is the bridge's own OpAMP server: collectors' opamp extensions connect to it (at
// /v1/opamp, WebSocket or HTTP) and the bridge nests their health and effective configuration in
// what it reports to the real OpAMP server. It is read-only (it never offers configuration), sets
// its server capabilities, asks for full state after a sequence gap, bounds message sizes and can
// require TLS and a bearer token.
package proxy

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server"
	"github.com/open-telemetry/opamp-go/server/types"

	"github.com/otelop/otelop/internal/opampbridge/agent"
	"github.com/otelop/otelop/internal/opampbridge/health"
)

// Path is where the proxy serves OpAMP.
const Path = "/v1/opamp"

// serverCapabilities are what the proxy tells agents it does.
const serverCapabilities = uint64(protobufs.ServerCapabilities_ServerCapabilities_AcceptsStatus |
	protobufs.ServerCapabilities_ServerCapabilities_AcceptsEffectiveConfig)

// Options configure a Server.
type Options struct {
	// Addr to listen on, e.g. ":8080" or "127.0.0.1:0".
	Addr string
	// TLS enables HTTPS/WSS when set.
	TLS *tls.Config
	// BearerToken, when set, must be presented as "Authorization: Bearer <token>".
	BearerToken string
	// MaxMessageBytes bounds an HTTP request body.
	MaxMessageBytes int64
	Logger          logr.Logger
}

type agentState struct {
	uid         string
	conn        types.Connection
	hostName    string
	health      *protobufs.ComponentHealth
	config      *protobufs.AgentConfigFile
	lastSeq     uint64
	connectedAt time.Time
}

// Server is a running proxy.
type Server struct {
	opts    Options
	httpSrv *http.Server
	ln      net.Listener
	changes chan struct{}

	mu     sync.Mutex
	agents map[string]*agentState
}

// Start listens and serves until Stop.
func Start(opts Options) (*Server, error) {
	s := &Server{opts: opts, changes: make(chan struct{}, 1), agents: map[string]*agentState{}}
	handler, connContext, err := server.New(nil).Attach(server.Settings{Callbacks: types.Callbacks{
		OnConnecting: func(*http.Request) types.ConnectionResponse {
			return types.ConnectionResponse{Accept: true, ConnectionCallbacks: types.ConnectionCallbacks{
				OnMessage:         s.onMessage,
				OnConnectionClose: s.onClose,
			}}
		},
	}})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s.guard(http.HandlerFunc(handler)))
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("proxy: listening on %s: %w", opts.Addr, err)
	}
	s.ln = ln
	s.httpSrv = &http.Server{Handler: mux, ConnContext: connContext, TLSConfig: opts.TLS, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		var err error
		if opts.TLS != nil {
			err = s.httpSrv.ServeTLS(ln, "", "")
		} else {
			err = s.httpSrv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logger.Error(err, "proxy server stopped")
		}
	}()
	return s, nil
}

// Addr is the address the proxy listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stop closes the listener and every connection.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	for _, a := range s.agents {
		if a.conn != nil {
			_ = a.conn.Disconnect()
		}
	}
	s.mu.Unlock()
	return s.httpSrv.Shutdown(ctx)
}

// guard enforces the bearer token and, for HTTP transport, the message size limit.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.BearerToken != "" {
			want := "Bearer " + s.opts.BearerToken
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if s.opts.MaxMessageBytes > 0 && r.Method == http.MethodPost {
			if r.ContentLength > s.opts.MaxMessageBytes {
				http.Error(w, "message too large", http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxMessageBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// Changes signals (coalesced) that agents connected, disconnected or reported.
func (s *Server) Changes() <-chan struct{} { return s.changes }

func (s *Server) signal() {
	select {
	case s.changes <- struct{}{}:
	default:
	}
}

// Agents returns the connected agents, sorted by UID.
func (s *Server) Agents() []agent.ProxiedAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]agent.ProxiedAgent, 0, len(s.agents))
	for _, a := range s.agents {
		out = append(out, agent.ProxiedAgent{
			Agent:           health.Agent{UID: a.uid, HostName: a.hostName, Health: a.health, StartTime: a.connectedAt},
			EffectiveConfig: a.config,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// UIDString formats an instance UID: 16 bytes as a UUID, anything else (legacy ULID strings)
// as text.
func UIDString(b []byte) string {
	if len(b) == 16 {
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	}
	return string(b)
}

func hostName(d *protobufs.AgentDescription) string {
	for _, kv := range append(append([]*protobufs.KeyValue{}, d.GetNonIdentifyingAttributes()...), d.GetIdentifyingAttributes()...) {
		if kv.GetKey() == "host.name" {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func (s *Server) onMessage(_ context.Context, conn types.Connection, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
	resp := &protobufs.ServerToAgent{InstanceUid: msg.GetInstanceUid(), Capabilities: serverCapabilities}
	uid := UIDString(msg.GetInstanceUid())
	if uid == "" {
		resp.ErrorResponse = &protobufs.ServerErrorResponse{Type: protobufs.ServerErrorResponseType_ServerErrorResponseType_BadRequest, ErrorMessage: "instance_uid is required"}
		return resp
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.signal()
	if msg.GetAgentDisconnect() != nil {
		delete(s.agents, uid)
		return resp
	}
	a := s.agents[uid]
	if a == nil {
		a = &agentState{uid: uid, connectedAt: time.Now()}
		s.agents[uid] = a
		if msg.GetAgentDescription() == nil {
			// We joined mid-stream (e.g. after a bridge restart): ask for everything.
			resp.Flags |= uint64(protobufs.ServerToAgentFlags_ServerToAgentFlags_ReportFullState)
		}
	} else if msg.GetSequenceNum() != a.lastSeq+1 {
		resp.Flags |= uint64(protobufs.ServerToAgentFlags_ServerToAgentFlags_ReportFullState)
	}
	a.lastSeq = msg.GetSequenceNum()
	a.conn = conn
	if d := msg.GetAgentDescription(); d != nil {
		a.hostName = hostName(d)
	}
	if h := msg.GetHealth(); h != nil {
		a.health = h
	}
	if ec := msg.GetEffectiveConfig(); ec != nil {
		a.config = ec.GetConfigMap().GetConfigMap()[""]
	}
	return resp
}

// onClose forgets the agents of a closed WebSocket. opamp-go also "closes" an HTTP connection
// after every poll; HTTP agents are forgotten when they send agent_disconnect instead.
func (s *Server) onClose(conn types.Connection) {
	if fmt.Sprintf("%T", conn) == "server.httpConnection" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, a := range s.agents {
		if a.conn == conn {
			delete(s.agents, uid)
		}
	}
	s.signal()
}
