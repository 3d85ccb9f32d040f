package proxy

import (
	"net"
	"net/http"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/otelop/otelop/internal/opampbridge/identity"
)

// What one pod can make the proxy keep (issue 31, finding 5). Every agent is bound to the
// connection it arrived on (one instance UID per connection; an HTTP agent may move to another
// connection from the same address); a new agent costs a token of its remote address's bucket
// and counts against that address's agents; and what the proxy keeps of the agents' reports
// (health and effective configuration, which the bridge copies into its own report) is bounded
// per agent and in total. A configuration that does not fit is dropped from the report; a
// health that does not fit is kept as its summary.

// Defaults of the state bounds in Options.
const (
	DefaultMaxAgentBytes       = 1 << 20
	DefaultMaxStateBytes       = 64 << 20
	DefaultNewAgentsPerSecond  = 1
	DefaultNewAgentBurst       = 10
	DefaultMaxAgentsPerAddress = 100
)

// agentOverhead is what an agent costs besides its reports: its strings, maps and buckets.
const agentOverhead = 512

// maxHostNameBytes bounds the host name kept (a DNS name has at most 253).
const maxHostNameBytes = 253

// size is what the agent costs, in bytes.
func (a *agentState) size() int64 {
	return int64(agentOverhead + len(a.uid) + len(a.hostName) + proto.Size(a.health) + proto.Size(a.config))
}

// remoteIP is the address a connection comes from, without its port.
func remoteIP(c net.Conn) string {
	if c == nil || c.RemoteAddr() == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// refuseConn returns why a message for the agent a (nil: a new UID) from the connection nc at
// address ip is refused, or "" to go on. s.mu must be held.
func (s *Server) refuseConn(a *agentState, uid string, nc net.Conn, ip string) string {
	if bound, ok := s.byConn[nc]; ok && bound != uid {
		return "this connection already speaks for another instance UID"
	}
	switch {
	case a == nil, a.netConn == nc:
		return ""
	case !a.http:
		return "this instance UID is connected on another connection"
	case a.addr != ip:
		return "this instance UID polls from another address"
	}
	return ""
}

// admit decides whether a new agent from ip may be created: it returns a refusal or "". s.mu
// must be held.
func (s *Server) admit(ip string, now time.Time) string {
	if len(s.agents) >= s.opts.MaxAgents {
		return "the bridge's proxy serves its maximum number of agents"
	}
	if s.perAddr[ip] >= s.opts.MaxAgentsPerAddress {
		return "too many agents from this address"
	}
	if s.bytes+agentOverhead > s.opts.MaxStateBytes {
		return "the bridge's proxy keeps its maximum of agent state"
	}
	b := s.newAgents[ip]
	if b == nil {
		if len(s.newAgents) >= s.opts.MaxAgents {
			return "too many addresses are creating agents"
		}
		b = &bucket{}
		s.newAgents[ip] = b
	}
	if !b.allow(now, s.opts.NewAgentsPerSecond, float64(s.opts.NewAgentBurst)) {
		return "too many new agents from this address"
	}
	return ""
}

// addAgent creates and binds a new agent. s.mu must be held.
func (s *Server) addAgent(uid string, nc net.Conn, ip string, now time.Time) *agentState {
	a := &agentState{uid: uid, connectedAt: now, netConn: nc, addr: ip}
	s.agents[uid] = a
	s.perAddr[ip]++
	s.bytes += a.size()
	return a
}

// removeAgent forgets an agent and its connection binding. s.mu must be held.
func (s *Server) removeAgent(a *agentState) {
	delete(s.agents, a.uid)
	s.bytes -= a.size()
	if s.perAddr[a.addr]--; s.perAddr[a.addr] <= 0 {
		delete(s.perAddr, a.addr)
	}
	if s.byConn[a.netConn] == a.uid {
		delete(s.byConn, a.netConn)
	}
}

// bind records that nc speaks for a (an HTTP agent may come back on a new connection). s.mu
// must be held.
func (s *Server) bind(a *agentState, nc net.Conn) {
	if a.netConn != nc && s.byConn[a.netConn] == a.uid {
		delete(s.byConn, a.netConn)
	}
	a.netConn = nc
	s.byConn[nc] = a.uid
}

// update applies what a message reports, within the bounds, and says whether anything changed.
// s.mu must be held.
func (s *Server) update(a *agentState, msg *protobufs.AgentToServer) bool {
	before := a.size()
	s.bytes -= before
	changed := false
	if d := msg.GetAgentDescription(); d != nil {
		if h := identity.Truncate(hostName(d), maxHostNameBytes); h != a.hostName {
			a.hostName, changed = h, true
		}
	}
	if h := msg.GetHealth(); h != nil && !proto.Equal(h, a.health) {
		a.health, changed = h, true
	}
	if ec := msg.GetEffectiveConfig(); ec != nil {
		if f := ec.GetConfigMap().GetConfigMap()[""]; !proto.Equal(f, a.config) {
			a.config, changed = f, true
		}
	}
	fits := func() bool {
		return a.size() <= s.opts.MaxAgentBytes && s.bytes+a.size() <= s.opts.MaxStateBytes
	}
	if !fits() && a.config != nil {
		a.config = nil
		s.opts.Logger.V(1).Info("dropping an agent's effective configuration from the report: over the proxy's state bounds", "uid", a.uid)
	}
	if !fits() && a.health != nil {
		a.health = &protobufs.ComponentHealth{Healthy: a.health.GetHealthy(), StartTimeUnixNano: a.health.GetStartTimeUnixNano(),
			Status: identity.Truncate(a.health.GetStatus(), 256), LastError: identity.Truncate(a.health.GetLastError(), 256)}
	}
	s.bytes += a.size()
	return changed
}

// connState forgets the agent bindings of closed HTTP connections (WebSocket ones go in onClose).
func (s *Server) connState(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byConn, c)
}

// pruneBuckets forgets the new-agent buckets of addresses that have been quiet long enough for
// them to be full again. s.mu must be held.
func (s *Server) pruneBuckets(now time.Time) {
	full := time.Duration(float64(s.opts.NewAgentBurst) / s.opts.NewAgentsPerSecond * float64(time.Second))
	for ip, b := range s.newAgents {
		if now.Sub(b.last) >= full {
			delete(s.newAgents, ip)
		}
	}
}

// StateBytes is what the proxy keeps of its agents, in bytes (bounded by MaxStateBytes).
func (s *Server) StateBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}
