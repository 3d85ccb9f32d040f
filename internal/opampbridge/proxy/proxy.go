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
	"encoding/hex"
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
	// MaxMessageBytes bounds one message: an HTTP request body (also once decompressed) or a
	// WebSocket message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// HTTPAgentTTL is how long an agent polling over plain HTTP stays listed after its last
	// message (it never closes a connection); 0 means DefaultHTTPAgentTTL.
	HTTPAgentTTL time.Duration
	// MessagesPerSecond and MessageBurst bound the messages one agent may send; the excess gets
	// an Unavailable error with a retry delay and is not processed. 0 means the defaults.
	MessagesPerSecond float64
	MessageBurst      int
	// MaxAgents bounds the agents listed at once; 0 means DefaultMaxAgents.
	MaxAgents int
	// MaxAgentsPerAddress bounds the agents of one remote address; 0 means
	// DefaultMaxAgentsPerAddress.
	MaxAgentsPerAddress int
	// NewAgentsPerSecond and NewAgentBurst bound the new instance UIDs one remote address may
	// bring; the excess gets an Unavailable error and creates nothing. 0 means the defaults.
	NewAgentsPerSecond float64
	NewAgentBurst      int
	// MaxAgentBytes bounds what the proxy keeps of one agent (its health and effective
	// configuration): a configuration over it is dropped from the report. 0 means
	// DefaultMaxAgentBytes.
	MaxAgentBytes int64
	// MaxStateBytes bounds what the proxy keeps of all agents; 0 means DefaultMaxStateBytes.
	MaxStateBytes int64
	// Serving, when set, is asked before each request: false answers 503 (a standby replica).
	Serving func() bool
	Logger  logr.Logger
}

// Defaults of Options.
const (
	DefaultMaxMessageBytes   = 64 << 20
	DefaultHTTPAgentTTL      = 3 * time.Minute
	DefaultMessagesPerSecond = 20
	DefaultMessageBurst      = 100
	DefaultMaxAgents         = 2000
)

func (o *Options) setDefaults() {
	orDefault(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	orDefault(&o.HTTPAgentTTL, DefaultHTTPAgentTTL)
	orDefault(&o.MessagesPerSecond, DefaultMessagesPerSecond)
	orDefault(&o.MessageBurst, DefaultMessageBurst)
	orDefault(&o.MaxAgents, DefaultMaxAgents)
	orDefault(&o.MaxAgentsPerAddress, DefaultMaxAgentsPerAddress)
	orDefault(&o.NewAgentsPerSecond, DefaultNewAgentsPerSecond)
	orDefault(&o.NewAgentBurst, DefaultNewAgentBurst)
	orDefault(&o.MaxAgentBytes, DefaultMaxAgentBytes)
	orDefault(&o.MaxStateBytes, DefaultMaxStateBytes)
}

// orDefault sets *v to d when it is zero or negative (unset).
func orDefault[T int | int64 | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

type agentState struct {
	uid         string
	conn        types.Connection
	hostName    string
	health      *protobufs.ComponentHealth
	config      *protobufs.AgentConfigFile
	lastSeq     uint64
	connectedAt time.Time
	lastSeen    time.Time
	http        bool
	rate        bucket
	netConn     net.Conn // the connection the agent speaks on
	addr        string   // its remote address
}

// Server is a running proxy.
type Server struct {
	opts    Options
	httpSrv *http.Server
	ln      net.Listener
	changes chan struct{}

	mu        sync.Mutex
	agents    map[string]*agentState
	bytes     int64               // what agents cost (agentState.size), at most MaxStateBytes
	byConn    map[net.Conn]string // the instance UID each connection speaks for
	perAddr   map[string]int      // agents per remote address
	newAgents map[string]*bucket  // new-agent tokens per remote address
	done      chan struct{}
}

// Start listens and serves until Stop.
func Start(opts Options) (*Server, error) {
	opts.setDefaults()
	s := &Server{opts: opts, changes: make(chan struct{}, 1), agents: map[string]*agentState{}, done: make(chan struct{}),
		byConn: map[net.Conn]string{}, perAddr: map[string]int{}, newAgents: map[string]*bucket{}}
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
	s.httpSrv = &http.Server{Handler: mux, ConnContext: connContext, ConnState: s.connState, TLSConfig: opts.TLS, ReadHeaderTimeout: 10 * time.Second}
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
	go s.expireLoop()
	return s, nil
}

// expireLoop forgets HTTP agents that stopped polling.
func (s *Server) expireLoop() {
	t := time.NewTicker(max(s.opts.HTTPAgentTTL/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			s.expire(now)
		}
	}
}

func (s *Server) expire(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, a := range s.agents {
		if a.http && now.Sub(a.lastSeen) > s.opts.HTTPAgentTTL {
			s.removeAgent(a)
			changed = true
		}
	}
	s.pruneBuckets(now)
	if changed {
		s.signal()
	}
}

// Addr is the address the proxy listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stop closes the listener and every connection.
func (s *Server) Stop(ctx context.Context) error {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.mu.Lock()
	for _, a := range s.agents {
		if a.conn != nil {
			_ = a.conn.Disconnect()
		}
	}
	s.mu.Unlock()
	return s.httpSrv.Shutdown(ctx)
}

// StandbyRetryAfter is the Retry-After (seconds) of a standby's 503. Standbys are ready and
// behind the Service (so that a Deployment of several replicas can roll, see package bridge), so
// an opamp extension may reach one; OpAMP clients wait at least Retry-After before they connect
// again, and the Service may then send them to the leader.
const StandbyRetryAfter = "5"

// guard answers 503 when not serving, enforces the bearer token and bounds message sizes.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Serving != nil && !s.opts.Serving() {
			w.Header().Set("Retry-After", StandbyRetryAfter)
			http.Error(w, "this bridge replica is a standby; connect to the leader", http.StatusServiceUnavailable)
			return
		}
		if s.opts.BearerToken != "" {
			want := "Bearer " + s.opts.BearerToken
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		w, ok := limitRequest(w, r, s.opts.MaxMessageBytes)
		if !ok {
			return
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

// MaxUIDBytes bounds an instance UID (16 bytes today; older agents sent 26-character ULIDs).
const MaxUIDBytes = 64

// UIDString formats an instance UID: 16 bytes as a UUID, anything else (legacy ULID strings) as
// hexadecimal, never as the text itself: the result is used as a key next to collectors'
// "namespace/name" keys, and must never contain a "/" nor equal another agent's UUID.
func UIDString(b []byte) string {
	if len(b) == 16 {
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	}
	return hex.EncodeToString(b)
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
	if n := len(msg.GetInstanceUid()); n == 0 || n > MaxUIDBytes {
		resp.ErrorResponse = badRequest(fmt.Sprintf("instance_uid must have 1 to %d bytes", MaxUIDBytes))
		return resp
	}
	uid := UIDString(msg.GetInstanceUid())
	nc := conn.Connection()
	ip := remoteIP(nc)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[uid]
	if why := s.refuseConn(a, uid, nc, ip); why != "" {
		resp.ErrorResponse = badRequest(why)
		return resp
	}
	if msg.GetAgentDisconnect() != nil {
		if a != nil {
			s.removeAgent(a)
			s.signal()
		}
		return resp
	}
	if a == nil {
		// Admission comes before any state: a refused UID costs nothing but the bucket's token.
		if why := s.admit(ip, now); why != "" {
			resp.ErrorResponse = unavailable(why)
			return resp
		}
		a = s.addAgent(uid, nc, ip, now)
		s.signal()
		if msg.GetAgentDescription() == nil {
			// We joined mid-stream (e.g. after a bridge restart): ask for everything.
			resp.Flags |= uint64(protobufs.ServerToAgentFlags_ServerToAgentFlags_ReportFullState)
		}
	} else if !a.rate.allow(now, s.opts.MessagesPerSecond, float64(s.opts.MessageBurst)) {
		// Flooding: drop the message; the gap in sequence numbers asks for full state later.
		a.lastSeen = now
		resp.ErrorResponse = unavailable("too many messages from this agent")
		return resp
	} else if msg.GetSequenceNum() != a.lastSeq+1 {
		resp.Flags |= uint64(protobufs.ServerToAgentFlags_ServerToAgentFlags_ReportFullState)
	}
	s.bind(a, nc)
	a.lastSeq = msg.GetSequenceNum()
	a.lastSeen = now
	a.conn = conn
	a.http = isHTTP(conn)
	if s.update(a, msg) {
		s.signal()
	}
	return resp
}

func badRequest(msg string) *protobufs.ServerErrorResponse {
	return &protobufs.ServerErrorResponse{Type: protobufs.ServerErrorResponseType_ServerErrorResponseType_BadRequest, ErrorMessage: msg}
}

func unavailable(msg string) *protobufs.ServerErrorResponse {
	return &protobufs.ServerErrorResponse{
		Type:         protobufs.ServerErrorResponseType_ServerErrorResponseType_Unavailable,
		ErrorMessage: msg,
		Details:      &protobufs.ServerErrorResponse_RetryInfo{RetryInfo: &protobufs.RetryInfo{RetryAfterNanoseconds: uint64(time.Second)}},
	}
}

// isHTTP reports whether conn is one plain HTTP poll (opamp-go does not export the type).
func isHTTP(conn types.Connection) bool { return fmt.Sprintf("%T", conn) == "server.httpConnection" }

// onClose forgets the agents of a closed WebSocket. opamp-go also "closes" an HTTP connection
// after every poll; HTTP agents are forgotten when they send agent_disconnect or stop polling
// for HTTPAgentTTL.
func (s *Server) onClose(conn types.Connection) {
	if isHTTP(conn) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.agents {
		if a.conn == conn {
			s.removeAgent(a)
			s.signal()
		}
	}
	delete(s.byConn, conn.Connection())
}
