// Package app wires the target allocator together: configuration, service discovery, the
// target pipeline, the collector watcher and the HTTP API.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	kubesd "github.com/prometheus/prometheus/discovery/kubernetes"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	collectorwatch "github.com/otelop/otelop/internal/targetallocator/collectors"
	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/targetallocator/filter"
	"github.com/otelop/otelop/internal/targetallocator/pipeline"
	"github.com/otelop/otelop/internal/targetallocator/server"
)

// Run serves until ctx ends. The listeners are opened before Run returns an error about them,
// so a port in use is reported at once.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newMetrics(reg, cfg.AllocationStrategy)

	alloc, err := allocation.New(cfg.AllocationStrategy, cfg.AllocationFallbackStrategy, m)
	if err != nil {
		return err
	}
	scs, err := cfg.Prometheus.GetScrapeConfigs()
	if err != nil {
		return fmt.Errorf("config.scrape_configs: %w", err)
	}
	relabel := filter.New(cfg.FilterStrategy, filter.FromScrapeConfigs(scs))
	pipe := pipeline.New(alloc, relabel)
	pipe.Observe = func(d time.Duration, kept int) {
		m.timeToAllocate.WithLabelValues("SetTargets", cfg.AllocationStrategy).Observe(d.Seconds())
		m.remaining.Set(float64(kept))
	}
	srv := server.New(alloc, reg)
	if cfg.AllowInsecureAuthSecrets {
		srv.InsecureSecrets = true
		log.Warn("allow_insecure_auth_secrets is set: /scrape_configs serves scrape secrets in clear over plain HTTP")
	}

	ln, tlsLn, err := listen(cfg)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 4)

	// Collectors.
	if err := watchCollectors(ctx, cfg, alloc, m, log, errc); err != nil {
		return err
	}

	// Service discovery.
	mgr, err := discover(ctx, scs, kubeconfigFile(cfg.KubeConfigPath), reg, pipe, log)
	if err != nil {
		return err
	}
	if err := srv.SetScrapeConfigs(scs); err != nil {
		return fmt.Errorf("rendering scrape configs: %w", err)
	}
	if cfg.PrometheusCR.Enabled {
		jobs := &jobSet{file: scs, kubeconfig: kubeconfigFile(cfg.KubeConfigPath), mgr: mgr, pipe: pipe, relabel: relabel, srv: srv, log: log}
		if err := watchResources(ctx, cfg, jobs, log, errc); err != nil {
			return err
		}
	}

	// HTTP.
	h := srv.Handler()
	plain := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	servers := []*http.Server{plain}
	go func() { errc <- serve(plain, ln) }()
	if tlsLn != nil {
		s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, s)
		go func() { errc <- serve(s, tlsLn) }()
	}
	log.Info("target allocator started", "listen", ln.Addr().String(), "strategy", cfg.AllocationStrategy,
		"filter", cfg.FilterStrategy, "jobs", len(scs), "https", cfg.HTTPS.Enabled)

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	cancel()
	shut, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	for _, s := range servers {
		_ = s.Shutdown(shut)
	}
	return runErr
}

// listen opens the plain listener and, with https enabled, the TLS one.
func listen(cfg config.Config) (ln, tlsLn net.Listener, err error) {
	ln, err = net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen-addr: %w", err)
	}
	if !cfg.HTTPS.Enabled {
		return ln, nil, nil
	}
	tc, err := tlsConfig(cfg.HTTPS)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	raw, err := net.Listen("tcp", cfg.HTTPS.ListenAddr)
	if err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("--listen-addr-https: %w", err)
	}
	return ln, tls.NewListener(raw, tc), nil
}

// watchCollectors starts the collector pod watcher (when collector_selector is set), which hands
// every change of the collector set to alloc; its end is sent to errc.
func watchCollectors(ctx context.Context, cfg config.Config, alloc *allocation.Allocator, m *metrics, log *slog.Logger, errc chan<- error) error {
	if cfg.CollectorSelector == nil {
		log.Info("collector_selector is not set: no collectors are watched; targets stay unassigned")
		return nil
	}
	rc, err := restConfig(cfg.KubeConfigPath)
	if err != nil {
		return fmt.Errorf("collector_selector is set but there is no Kubernetes connection: %w", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	w := &collectorwatch.Watcher{Client: cs, Namespace: cfg.CollectorNamespace, Selector: cfg.CollectorSelector,
		GracePeriod: cfg.CollectorNotReadyGracePeriod, Log: log,
		OnChange: func(c []allocation.Collector) {
			m.discovered.Set(float64(len(c)))
			start := time.Now()
			alloc.SetCollectors(c)
			m.timeToAllocate.WithLabelValues("SetCollectors", cfg.AllocationStrategy).Observe(time.Since(start).Seconds())
		}}
	go func() { errc <- w.Run(ctx) }()
	return nil
}

// discover runs Prometheus service discovery for the scrape configs and feeds every target set
// it syncs into pipe until ctx ends.
func discover(ctx context.Context, scs []*promconfig.ScrapeConfig, kubeconfig string, reg prometheus.Registerer, pipe *pipeline.Pipeline, log *slog.Logger) (*discovery.Manager, error) {
	sdMetrics, err := discovery.CreateAndRegisterSDMetrics(reg)
	if err != nil {
		return nil, err
	}
	mgr := discovery.NewManager(ctx, log.With("component", "discovery"), reg, sdMetrics)
	if mgr == nil {
		return nil, errors.New("service discovery manager could not be created")
	}
	if err := mgr.ApplyConfig(sdConfigs(scs, kubeconfig)); err != nil {
		return nil, fmt.Errorf("service discovery: %w", err)
	}
	go func() { _ = mgr.Run() }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case tsets := <-mgr.SyncCh():
				pipe.Process(tsets)
			}
		}
	}()
	return mgr, nil
}

// sdConfigs are the jobs' discovery configurations for the manager. When the allocator runs
// with a kubeconfig file (outside a cluster), kubernetes_sd configurations that name no API
// server use that file instead of the in-cluster configuration they would otherwise need; the
// scrape configurations served to collectors are not changed.
func sdConfigs(scs []*promconfig.ScrapeConfig, kubeconfig string) map[string]discovery.Configs {
	sd := make(map[string]discovery.Configs, len(scs))
	for _, sc := range scs {
		cfgs := sc.ServiceDiscoveryConfigs
		if kubeconfig != "" {
			cfgs = make(discovery.Configs, len(sc.ServiceDiscoveryConfigs))
			for i, c := range sc.ServiceDiscoveryConfigs {
				if k, ok := c.(*kubesd.SDConfig); ok && k.APIServer.URL == nil && k.KubeConfig == "" {
					cp := *k
					cp.KubeConfig = kubeconfig
					c = &cp
				}
				cfgs[i] = c
			}
		}
		sd[sc.JobName] = cfgs
	}
	return sd
}

// kubeconfigFile is the kubeconfig file the allocator uses, "" for the in-cluster configuration
// (as restConfig decides).
func kubeconfigFile(path string) string {
	if path == "" {
		return ""
	}
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

func serve(s *http.Server, ln net.Listener) error {
	if err := s.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// restConfig uses the kubeconfig file when it exists, else the in-cluster configuration.
func restConfig(path string) (*rest.Config, error) {
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return clientcmd.BuildConfigFromFlags("", path)
		}
	}
	return rest.InClusterConfig()
}

// tlsConfig serves the certificate of h to clients that present a certificate signed by h's CA
// (mutual TLS). The HTTPS listener serves scrape secrets in clear, so it never starts without a CA:
// a TLS client without a certificate must not read them.
func tlsConfig(h config.HTTPS) (*tls.Config, error) {
	if h.TLSCertFilePath == "" || h.TLSKeyFilePath == "" || h.CAFilePath == "" {
		return nil, errors.New("https: tls_cert_file_path, tls_key_file_path and ca_file_path (--https-tls-cert-file, --https-tls-key-file, --https-ca-file) are all required when HTTPS is enabled: the HTTPS listener serves scrape secrets to clients with a certificate signed by that CA only")
	}
	r := &tlsFiles{https: h, every: tlsRecheck}
	if _, err := r.load(); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: r.configForClient}, nil
}
