// Package bridge wires the OpAMP bridge together: health and metrics endpoints, the proxy server
// for collectors, the collector informers, the persisted identity, optional Lease-based leader
// election, and the OpAMP agent. cmd/operator-opamp-bridge and the end-to-end tests both call Run.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/opampbridge/agent"
	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/config"
	"github.com/otelop/otelop/internal/opampbridge/identity"
	"github.com/otelop/otelop/internal/opampbridge/metrics"
	"github.com/otelop/otelop/internal/opampbridge/proxy"
)

// Options are what Run needs besides the configuration.
type Options struct {
	Logger  logr.Logger
	Version string
	// Listening, if set, is told the proxy's and the health server's actual addresses.
	Listening func(proxyAddr, healthAddr string)
	// Lease timings for leader election; zero values mean 15s, 10s and 2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnConnect is passed to the agent (tests).
	OnConnect func()
	// MaxServerMessageBytes is passed to the agent (tests).
	MaxServerMessageBytes int64
	// RetryBackoff is passed to the agent (tests).
	RetryBackoff time.Duration
	// SyncTimeout bounds the wait for the collector informers' first sync; zero means
	// cfg.SyncTimeout.
	SyncTimeout time.Duration
}

// Scheme returns the scheme the bridge uses: client-go's kinds plus OpenTelemetryCollector.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// LeaseName is the leader-election Lease of the bridge called bridgeName.
func LeaseName(bridgeName string) string { return identity.LeaseName(bridgeName) }

// Client rate limits towards the API server: a remote configuration of n collectors costs about
// 3n requests (read, dry run, apply), so 500 collectors take about 6 s at this rate, and a server
// pushing configurations in a loop cannot make the bridge flood the API server.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// ClientConfig returns a copy of rc with DefaultQPS and DefaultBurst unless rc sets a positive
// rate of its own (unset and negative, i.e. unlimited, both get the defaults).
func ClientConfig(rc *rest.Config) *rest.Config {
	rc = rest.CopyConfig(rc)
	if rc.QPS <= 0 {
		rc.QPS, rc.Burst = DefaultQPS, DefaultBurst
	}
	if rc.Burst <= 0 {
		rc.Burst = max(DefaultBurst, int(rc.QPS))
	}
	return rc
}

// newStore is the bridge's identity record. The identity ConfigMap and the Lease go with the
// OpAMPBridge resource, if one runs this bridge (owner, nil otherwise).
func newStore(ctx context.Context, kube client.Client, cfg *config.Config, opts Options) (*identity.Store, *metav1.OwnerReference) {
	store := identity.New(kube, cfg.Namespace, cfg.Name)
	owner, err := identity.FindOwner(ctx, kube, cfg.Namespace, cfg.Name, mbridge.Name(cfg.Name))
	if err != nil {
		opts.Logger.Info("cannot look up the OpAMPBridge resource running this bridge; its identity ConfigMap and Lease will not be garbage collected with it", "error", err.Error())
	}
	if owner != nil {
		store.SetOwner(owner)
	}
	return store, owner
}

// serveHealth serves /healthz, /readyz (from st) and /metrics on addr; it returns the bound
// address and a stop function.
func serveHealth(addr string, st *readiness, m *metrics.Metrics) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("health: listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", st.healthz)
	mux.HandleFunc("/readyz", st.readyz)
	mux.Handle("/metrics", m.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return ln.Addr().String(), func() { _ = hs.Close() }, nil
}

// firstPositive returns the first of ds that is positive (0 if none is).
func firstPositive(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// Run runs the bridge until ctx ends (nil error) or something fails. With leader election, losing
// the Lease is an error: the process should exit and restart as a standby.
func Run(ctx context.Context, cfg *config.Config, rc *rest.Config, opts Options) error {
	log := opts.Logger
	rc = ClientConfig(rc)
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	kube, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	store, owner := newStore(ctx, kube, cfg, opts)
	cols, err := collectors.New(rc, scheme, collectors.Options{
		BridgeName: cfg.Name, BridgeNamespace: cfg.Namespace, ComponentsAllowed: cfg.ComponentsAllowed,
		Namespaces: cfg.Namespaces, Writable: cfg.FieldsAllowed, Record: store,
	})
	if err != nil {
		return err
	}
	proxyTLS, err := cfg.ProxyServerTLS()
	if err != nil {
		return err
	}
	token, err := cfg.ProxyServerToken()
	if err != nil {
		return err
	}
	// st says what the health endpoints report: /healthz and /readyz are ok once the informers
	// synced, on the leader and on standbys alike (see readiness). Only the replica that serves
	// (the leader, or the only one) accepts agents on its proxy: a standby answers 503 with
	// Retry-After, as agents connected to it would never be reported.
	var st readiness
	px, err := proxy.Start(proxy.Options{Addr: cfg.ListenAddr, TLS: proxyTLS, BearerToken: token,
		MaxMessageBytes: cfg.MaxMessageBytes(), Serving: st.serving.Load, Logger: log.WithName("proxy")})
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = px.Stop(stopCtx)
	}()
	m := metrics.New(func() int { return len(px.Agents()) })
	healthAddr, stopHealth, err := serveHealth(cfg.HealthListenAddr, &st, m)
	if err != nil {
		return err
	}
	defer stopHealth()
	if opts.Listening != nil {
		opts.Listening(px.Addr(), healthAddr)
	}
	syncTimeout := firstPositive(opts.SyncTimeout, cfg.SyncTimeout, config.DefaultSyncTimeout)
	syncCtx, cancelSync := context.WithTimeout(ctx, syncTimeout)
	err = cols.Start(ctx, syncCtx)
	cancelSync()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%w within %s (can the bridge list OpenTelemetryCollectors and pods?)", err, syncTimeout)
	}
	st.synced.Store(true)
	lead := func(ctx context.Context) error {
		id, err := store.Load(ctx)
		if err != nil {
			return err
		}
		st.serving.Store(true)
		defer st.serving.Store(false)
		log.Info("starting the OpAMP agent", "instanceUID", id.UID.String(), "endpoint", cfg.Endpoint)
		a, err := agent.New(agent.Options{
			Config: cfg, UID: id.UID, RemoteConfigStatus: id.RemoteConfigStatus,
			Collectors: cols, Proxy: px, Store: store, Recorder: m,
			Logger: log.WithName("agent"), Version: opts.Version, OnConnect: opts.OnConnect,
			RetryBackoff: opts.RetryBackoff, MaxServerMessageBytes: opts.MaxServerMessageBytes,
		})
		if err != nil {
			return err
		}
		return a.Run(ctx)
	}
	if !cfg.LeaderElection {
		return lead(ctx)
	}
	return runElected(ctx, cfg, rc, opts, owner, lead)
}

func runElected(ctx context.Context, cfg *config.Config, rc *rest.Config, opts Options, owner *metav1.OwnerReference, lead func(context.Context) error) error {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	if err := ensureLease(ctx, cs, cfg.Namespace, LeaseName(cfg.Name), owner); err != nil {
		opts.Logger.Info("cannot label the leader-election Lease or set its owner", "error", err.Error())
	}
	host, _ := os.Hostname()
	id := host + "_" + uuid.NewString()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaFor(cfg.Namespace, LeaseName(cfg.Name)),
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	or := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	errc := make(chan error, 1)
	lost := make(chan struct{})
	leCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   or(opts.LeaseDuration, 15*time.Second),
		RenewDeadline:   or(opts.RenewDeadline, 10*time.Second),
		RetryPeriod:     or(opts.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Name:            LeaseName(cfg.Name),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				opts.Logger.Info("became the leader", "identity", id)
				errc <- lead(ctx)
				cancel()
			},
			OnStoppedLeading: func() { close(lost) },
		},
	})
	if err != nil {
		return err
	}
	opts.Logger.Info("standing by for the leader-election Lease", "lease", LeaseName(cfg.Name), "identity", id)
	le.Run(leCtx)
	select {
	case err := <-errc:
		if err != nil {
			return err
		}
	default:
	}
	if ctx.Err() != nil {
		return nil
	}
	<-lost
	return errors.New("lost the leader-election Lease")
}

// readiness is what /healthz and /readyz report.
//
// A standby is ready once its informers synced, although it does not serve: readiness is what a
// Deployment counts to roll, and a rollout with only the leader ready can never finish. With 2
// replicas the default RollingUpdate (maxSurge 1, maxUnavailable 0) waits for the surge pod to be
// ready before it removes an old pod; the surge pod is a standby, so an old pod was never removed
// and a changed OpAMPBridge never took effect (issue 31, finding 2). Recreate does not help
// either: the Deployment would stay unavailable with 1 of 2 ready. So every synced replica is
// ready and behind the Service; a collector's opamp extension that reaches a standby gets 503 with
// Retry-After from the proxy (proxy.Options.Serving), retries as the OpAMP specification asks,
// and lands on the leader. A standby that is ready can take over at once: its informers are
// synced, all it waits for is the Lease. The body of /readyz says which of the two a replica is.
type readiness struct {
	synced  atomic.Bool
	serving atomic.Bool
}

func (r *readiness) healthz(w http.ResponseWriter, _ *http.Request) {
	if !r.synced.Load() {
		http.Error(w, "collector informers not synced yet", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// Bodies of a ready /readyz.
const (
	readyLeader  = "ok: serving"
	readyStandby = "ok: standby, waiting for the leader-election Lease; the proxy answers 503 with Retry-After"
)

func (r *readiness) readyz(w http.ResponseWriter, _ *http.Request) {
	switch {
	case !r.synced.Load():
		http.Error(w, "collector informers not synced yet", http.StatusServiceUnavailable)
	case !r.serving.Load():
		_, _ = w.Write([]byte(readyStandby))
	default:
		_, _ = w.Write([]byte(readyLeader))
	}
}
