// Package agent is the bridge's OpAMP client: it describes the bridge to the OpAMP server,
// reports the effective configuration and health of the collectors it sees (and of those connected
// to its proxy), applies remote configuration to collectors, and handles the restart command.
package agent

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/config"
	"github.com/otelop/otelop/internal/opampbridge/health"
)

// ServiceName is the bridge's service.name attribute, as upstream's.
const ServiceName = "io.opentelemetry.operator-opamp-bridge"

// ModeAttribute is the non-identifying attribute that tells servers the bridge's mode.
const ModeAttribute = "opentelemetry.io/opamp.bridge.mode"

// ContentType is the MIME type of the effective configuration files.
const ContentType = "text/yaml"

// Collectors is what the agent needs from the cluster (implemented by collectors.Client).
type Collectors interface {
	// EffectiveConfig renders each collector keyed "namespace/name".
	EffectiveConfig(ctx context.Context) (map[string][]byte, error)
	// ApplyAll makes the cluster match a remote configuration.
	ApplyAll(ctx context.Context, files map[string][]byte) error
	// Restart rolls managed collectors' workloads.
	Restart(ctx context.Context, now time.Time) ([]collectors.Key, error)
	// HealthInput lists collectors with their pods.
	HealthInput(ctx context.Context) ([]health.Collector, error)
	// Changes signals that collectors or pods changed.
	Changes() <-chan struct{}
}

// ProxiedAgent is a collector connected to the bridge's proxy server.
type ProxiedAgent struct {
	health.Agent
	// EffectiveConfig is the agent's own effective configuration file, or nil.
	EffectiveConfig *protobufs.AgentConfigFile
}

// Proxy is what the agent needs from the proxy server (implemented by proxy.Server).
type Proxy interface {
	// Agents returns the connected agents.
	Agents() []ProxiedAgent
	// Changes signals that agents connected, disconnected or reported.
	Changes() <-chan struct{}
}

// StatusStore persists the last remote configuration status.
type StatusStore interface {
	SaveRemoteConfigStatus(ctx context.Context, st *protobufs.RemoteConfigStatus) error
}

// Recorder counts what the agent does (implemented by metrics.Metrics); nil records nothing.
type Recorder interface {
	MessageReceived()
	ConfigApplied(ok bool, files int, took time.Duration)
}

// Options configure an Agent.
type Options struct {
	Config *config.Config
	// UID is the instance UID (persisted by the identity package).
	UID uuid.UUID
	// RemoteConfigStatus is the status last reported, restored at start; nil for none.
	RemoteConfigStatus *protobufs.RemoteConfigStatus
	Collectors         Collectors
	// Proxy may be nil.
	Proxy Proxy
	// Store may be nil.
	Store    StatusStore
	Recorder Recorder
	Logger   logr.Logger
	// Version is the bridge's version (service.version).
	Version string
	// OnConnect is called when the connection to the server is established (tests).
	OnConnect func()
	// MaxServerMessageBytes bounds one WebSocket message from the server; zero means
	// DefaultMaxServerMessageBytes.
	MaxServerMessageBytes int64
	// RetryBackoff is the first delay before a FAILED remote configuration is applied again;
	// zero means DefaultRetryBackoff.
	RetryBackoff time.Duration
}

// Agent is the bridge's OpAMP client.
type Agent struct {
	opts   Options
	caps   protobufs.AgentCapabilities
	client client.OpAMPClient
	start  time.Time
	log    logr.Logger

	applyMu  sync.Mutex // one remote configuration at a time
	retryNow chan struct{}

	mu         sync.Mutex
	failed     *protobufs.AgentRemoteConfig // the configuration to retry, while it fails
	retryDelay time.Duration
	retryTimer *time.Timer
	lastStatus *protobufs.RemoteConfigStatus
	lastHealth *protobufs.ComponentHealth
	lastConfig []byte // fingerprint of the last effective config sent
}

// New checks the options and builds an Agent.
func New(opts Options) (*Agent, error) {
	caps, err := opts.Config.AgentCapabilities()
	if err != nil {
		return nil, err
	}
	if opts.Collectors == nil {
		return nil, errors.New("agent: Collectors is required")
	}
	a := &Agent{opts: opts, caps: caps, log: opts.Logger, lastStatus: opts.RemoteConfigStatus, retryNow: make(chan struct{}, 1)}
	if opts.Config.UsesHTTP() {
		c := client.NewHTTP(logAdapter{opts.Logger})
		if hb := opts.Config.HeartbeatInterval; hb > 0 {
			c.SetPollingInterval(hb)
		}
		a.client = c
	} else {
		a.client = client.NewWebSocket(logAdapter{opts.Logger})
	}
	return a, nil
}

func (a *Agent) has(c protobufs.AgentCapabilities) bool { return a.caps&c != 0 }

// Description returns the agent description the bridge sends.
func (a *Agent) Description() *protobufs.AgentDescription {
	host, _ := os.Hostname()
	kv := func(k, v string) *protobufs.KeyValue {
		return &protobufs.KeyValue{Key: k, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: v}}}
	}
	ident := []*protobufs.KeyValue{
		kv("service.name", ServiceName),
		kv("service.version", a.opts.Version),
		kv("service.instance.id", a.opts.UID.String()),
	}
	nonIdent := []*protobufs.KeyValue{
		kv("os.family", runtime.GOOS),
		kv("host.name", host),
	}
	for k, v := range a.opts.Config.Description.NonIdentifyingAttributes {
		if k != ModeAttribute {
			nonIdent = append(nonIdent, kv(k, v))
		}
	}
	nonIdent = append(nonIdent, kv(ModeAttribute, string(a.opts.Config.Mode)))
	sortKV(nonIdent)
	return &protobufs.AgentDescription{IdentifyingAttributes: ident, NonIdentifyingAttributes: nonIdent}
}

// Run connects to the server and reports until ctx ends, then disconnects.
func (a *Agent) Run(ctx context.Context) error {
	a.start = time.Now()
	cfg := a.opts.Config
	tlsCfg, err := cfg.ClientTLS()
	if err != nil {
		return err
	}
	if err := a.client.SetAgentDescription(a.Description()); err != nil {
		return err
	}
	if a.has(protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth) {
		h := a.healthTree(ctx)
		a.lastHealth = h
		if err := a.client.SetHealth(h); err != nil {
			return err
		}
	}
	// After SetHealth: opamp-go refuses ReportsHealth without a health.
	if err := a.client.SetCapabilities(&a.caps); err != nil {
		return err
	}
	var hb *time.Duration
	if cfg.HeartbeatInterval > 0 {
		hb = &cfg.HeartbeatInterval
	}
	settings := types.StartSettings{
		OpAMPServerURL:     cfg.Endpoint,
		Header:             cfg.HTTPHeader(),
		TLSConfig:          tlsCfg,
		ProxyURL:           cfg.ProxyURL(),
		ProxyHeaders:       cfg.ProxyHeader(),
		InstanceUid:        types.InstanceUid(a.opts.UID),
		RemoteConfigStatus: a.opts.RemoteConfigStatus,
		HeartbeatInterval:  hb,
		Callbacks: types.Callbacks{
			OnConnect: func(context.Context) {
				a.log.Info("connected to the OpAMP server", "endpoint", cfg.Endpoint)
				if a.opts.OnConnect != nil {
					a.opts.OnConnect()
				}
			},
			OnConnectFailed: func(_ context.Context, err error) {
				a.log.Info("cannot connect to the OpAMP server; retrying", "endpoint", cfg.Endpoint, "error", err.Error())
			},
			OnError: func(_ context.Context, e *protobufs.ServerErrorResponse) {
				a.log.Info("the OpAMP server returned an error", "message", e.GetErrorMessage())
			},
			OnMessage:          a.onMessage,
			OnCommand:          a.onCommand,
			GetEffectiveConfig: a.effectiveConfig,
		},
	}
	if !cfg.UsesHTTP() && cfg.ProxyURL() == "" {
		limit := a.opts.MaxServerMessageBytes
		if limit <= 0 {
			limit = DefaultMaxServerMessageBytes
		}
		limitServerMessages(limit, tlsCfg)
	}
	if err := a.client.Start(ctx, settings); err != nil {
		return err
	}
	a.loop(ctx)
	a.mu.Lock()
	if a.retryTimer != nil {
		a.retryTimer.Stop()
	}
	a.mu.Unlock()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return a.client.Stop(stopCtx)
}

// loop re-reports on changes (coalesced over a short window) and on the heartbeat.
func (a *Agent) loop(ctx context.Context) {
	var proxyChanges <-chan struct{}
	if a.opts.Proxy != nil {
		proxyChanges = a.opts.Proxy.Changes()
	}
	var heartbeat <-chan time.Time
	if hb := a.opts.Config.HeartbeatInterval; hb > 0 {
		t := time.NewTicker(hb)
		defer t.Stop()
		heartbeat = t.C
	}
	// Changes are coalesced until none came for settle, but for at most maxWait after the first:
	// a stream of changes (a flooding agent, a long apply) delays a report by maxWait at most
	// instead of starving it, and a burst still makes one report.
	const settle, maxWait = 100 * time.Millisecond, time.Second
	pending := time.NewTimer(time.Hour)
	pending.Stop()
	armed := false
	var first time.Time
	arm := func() {
		now := time.Now()
		if !armed {
			armed, first = true, now
		}
		pending.Reset(min(settle, max(0, first.Add(maxWait).Sub(now))))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.opts.Collectors.Changes():
			arm()
		case <-proxyChanges:
			arm()
		case <-pending.C:
			armed = false
			a.report(ctx, false)
		case <-heartbeat:
			a.report(ctx, true)
		case <-a.retryNow:
			a.retryFailed(ctx)
		}
	}
}

// report sends the effective configuration and health if they changed (health always on a
// heartbeat).
func (a *Agent) report(ctx context.Context, heartbeat bool) {
	if a.has(protobufs.AgentCapabilities_AgentCapabilities_ReportsEffectiveConfig) {
		if changed, err := a.effectiveConfigChanged(ctx); err != nil {
			a.log.Error(err, "reading the effective configuration")
		} else if changed {
			if err := a.client.UpdateEffectiveConfig(ctx); err != nil {
				a.log.Error(err, "sending the effective configuration")
			}
		}
	}
	if a.has(protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth) {
		h := a.healthTree(ctx)
		a.mu.Lock()
		same := protoEqual(h, a.lastHealth)
		a.lastHealth = h
		a.mu.Unlock()
		if !same || heartbeat {
			if err := a.client.SetHealth(h); err != nil {
				a.log.Error(err, "sending health")
			}
		}
	}
}

func (a *Agent) healthTree(ctx context.Context) *protobufs.ComponentHealth {
	cols, err := a.opts.Collectors.HealthInput(ctx)
	if err != nil {
		a.log.Error(err, "reading collectors for health")
	}
	var agents []health.Agent
	if a.opts.Proxy != nil {
		for _, p := range a.opts.Proxy.Agents() {
			agents = append(agents, p.Agent)
		}
	}
	return health.Tree(a.start, cols, agents)
}
