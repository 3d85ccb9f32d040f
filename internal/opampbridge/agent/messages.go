package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/otelop/otelop/internal/opampbridge/identity"
)

// onMessage handles a ServerToAgent message the client passes on (it handles flags and identity
// itself).
func (a *Agent) onMessage(ctx context.Context, msg *types.MessageData) {
	if a.opts.Recorder != nil {
		a.opts.Recorder.MessageReceived()
	}
	if msg.RemoteConfig == nil || !a.has(protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig) {
		return
	}
	st, changed := a.ApplyRemoteConfig(ctx, msg.RemoteConfig)
	if changed {
		a.publish(ctx, st)
	}
}

// publish sends a new remote configuration status and saves it.
func (a *Agent) publish(ctx context.Context, st *protobufs.RemoteConfigStatus) {
	if a.has(protobufs.AgentCapabilities_AgentCapabilities_ReportsRemoteConfig) {
		if err := a.client.SetRemoteConfigStatus(st); err != nil {
			a.log.Error(err, "sending the remote configuration status")
		}
	}
	if a.opts.Store != nil {
		if err := a.opts.Store.SaveRemoteConfigStatus(ctx, st); err != nil {
			a.log.Error(err, "saving the remote configuration status")
		}
	}
}

// ApplyRemoteConfig applies a remote configuration unless its hash is the last one applied. A
// configuration whose last attempt FAILED is applied again (and retried later with backoff, see
// retryFailed): what failed may have been fixed in the cluster since. It returns the status and
// whether the status changed (a same-hash no-op or an identical failure sends nothing).
func (a *Agent) ApplyRemoteConfig(ctx context.Context, rc *protobufs.AgentRemoteConfig) (*protobufs.RemoteConfigStatus, bool) {
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	hash := rc.GetConfigHash()
	if hash == nil {
		hash = []byte{}
	}
	a.mu.Lock()
	last := a.lastStatus
	a.mu.Unlock()
	sameHash := last != nil && len(hash) > 0 && bytes.Equal(last.GetLastRemoteConfigHash(), hash)
	if sameHash && last.GetStatus() != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED {
		return last, false
	}
	files, err := a.collectorFiles(rc.GetConfig().GetConfigMap())
	if err == nil {
		started := time.Now()
		err = a.opts.Collectors.ApplyAll(ctx, files)
		if a.opts.Recorder != nil {
			a.opts.Recorder.ConfigApplied(err == nil, len(files), time.Since(started))
		}
	}
	st := &protobufs.RemoteConfigStatus{LastRemoteConfigHash: hash, Status: protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED}
	if err != nil {
		st.Status = protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED
		st.ErrorMessage = identity.Truncate(err.Error(), MaxErrorBytes)
		a.log.Info("remote configuration failed", "hash", fmt.Sprintf("%x", hash), "error", st.ErrorMessage)
	} else {
		a.log.Info("remote configuration applied", "hash", fmt.Sprintf("%x", hash), "collectors", len(files))
	}
	a.mu.Lock()
	a.lastStatus = st
	a.mu.Unlock()
	a.scheduleRetry(rc, st, sameHash)
	return st, !proto.Equal(st, last)
}

// MaxErrorBytes bounds the error message of a remote configuration status.
const MaxErrorBytes = identity.MaxErrorBytes

// Retry backoff of a FAILED remote configuration.
const (
	DefaultRetryBackoff = 5 * time.Second
	MaxRetryBackoff     = 5 * time.Minute
)

// scheduleRetry arms (or, after a success, disarms) the retry of the configuration rc. Each
// failure of the same configuration doubles the delay, up to MaxRetryBackoff.
func (a *Agent) scheduleRetry(rc *protobufs.AgentRemoteConfig, st *protobufs.RemoteConfigStatus, sameHash bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.retryTimer != nil {
		a.retryTimer.Stop()
		a.retryTimer = nil
	}
	if st.GetStatus() != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED {
		a.failed, a.retryDelay = nil, 0
		return
	}
	switch {
	case !sameHash || a.retryDelay == 0:
		a.retryDelay = a.opts.RetryBackoff
		if a.retryDelay <= 0 {
			a.retryDelay = DefaultRetryBackoff
		}
	default:
		a.retryDelay = min(2*a.retryDelay, MaxRetryBackoff)
	}
	a.failed = rc
	a.retryTimer = time.AfterFunc(a.retryDelay, func() {
		select {
		case a.retryNow <- struct{}{}:
		default:
		}
	})
}

// retryFailed applies the last FAILED configuration again and reports the status if it changed.
func (a *Agent) retryFailed(ctx context.Context) {
	a.mu.Lock()
	rc := a.failed
	a.mu.Unlock()
	if rc == nil {
		return
	}
	st, changed := a.ApplyRemoteConfig(ctx, rc)
	if changed {
		a.publish(ctx, st)
	}
}

// collectorFiles drops the files keyed by a proxied agent's instance UID (servers may echo the
// effective configuration back); every other key goes to the collectors, which reject keys that
// are not "namespace/name" together with any other error.
func (a *Agent) collectorFiles(in map[string]*protobufs.AgentConfigFile) (map[string][]byte, error) {
	out := make(map[string][]byte, len(in))
	for k, f := range in {
		if !strings.Contains(k, "/") && a.isProxiedAgent(k) {
			continue
		}
		out[k] = f.GetBody()
	}
	return out, nil
}

func (a *Agent) isProxiedAgent(key string) bool {
	if _, err := uuid.Parse(key); err == nil {
		return true
	}
	if a.opts.Proxy == nil {
		return false
	}
	for _, p := range a.opts.Proxy.Agents() {
		if p.UID == key {
			return true
		}
	}
	return false
}

// onCommand handles server commands; only restart exists.
func (a *Agent) onCommand(ctx context.Context, cmd *protobufs.ServerToAgentCommand) error {
	if cmd.GetType() != protobufs.CommandType_CommandType_Restart {
		return fmt.Errorf("unsupported command %s", cmd.GetType())
	}
	keys, err := a.opts.Collectors.Restart(ctx, time.Now())
	a.log.Info("restart command handled", "restarted", len(keys))
	return err
}

// effectiveConfig is the GetEffectiveConfig callback: the collectors' files plus each proxied
// agent's own file keyed by its UID.
func (a *Agent) effectiveConfig(ctx context.Context) (*protobufs.EffectiveConfig, error) {
	files, err := a.opts.Collectors.EffectiveConfig(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*protobufs.AgentConfigFile, len(files))
	for k, body := range files {
		m[k] = &protobufs.AgentConfigFile{Body: body, ContentType: ContentType}
	}
	if a.opts.Proxy != nil {
		for _, p := range a.opts.Proxy.Agents() {
			if p.EffectiveConfig != nil {
				m[p.UID] = p.EffectiveConfig
			}
		}
	}
	return &protobufs.EffectiveConfig{ConfigMap: &protobufs.AgentConfigMap{ConfigMap: m}}, nil
}

// effectiveConfigChanged reports whether the effective configuration differs from the last one
// seen, and remembers it.
func (a *Agent) effectiveConfigChanged(ctx context.Context) (bool, error) {
	ec, err := a.effectiveConfig(ctx)
	if err != nil {
		return false, err
	}
	fp := fingerprint(ec.GetConfigMap().GetConfigMap())
	a.mu.Lock()
	defer a.mu.Unlock()
	if bytes.Equal(fp, a.lastConfig) {
		return false, nil
	}
	a.lastConfig = fp
	return true, nil
}

func fingerprint(m map[string]*protobufs.AgentConfigFile) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(m[k].GetBody()))
		h.Write(m[k].GetBody())
		h.Write([]byte(m[k].GetContentType()))
	}
	return h.Sum(nil)
}

func protoEqual(a, b proto.Message) bool { return proto.Equal(a, b) }

func sortKV(kvs []*protobufs.KeyValue) {
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
}

// logAdapter routes opamp-go's logging to logr.
type logAdapter struct{ l logr.Logger }

func (l logAdapter) Debugf(_ context.Context, format string, v ...any) {
	l.l.V(1).Info(fmt.Sprintf(format, v...))
}

func (l logAdapter) Errorf(_ context.Context, format string, v ...any) {
	l.l.Info(fmt.Sprintf(format, v...), "source", "opamp-go")
}
