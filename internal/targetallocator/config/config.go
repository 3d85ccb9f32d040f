// Package config reads the target allocator's configuration file (targetallocator.yaml, the file
// the operator writes into the <name>-targetallocator ConfigMap) and its command-line flags. The
// keys, defaults and flag names are upstream's, so an upstream file works unchanged.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	promconfig "github.com/prometheus/prometheus/config"
	yaml "go.yaml.in/yaml/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// Defaults, as upstream's.
const (
	DefaultConfigFilePath               = "/conf/targetallocator.yaml"
	DefaultListenAddr                   = ":8080"
	DefaultHTTPSListenAddr              = ":8443"
	DefaultAllocationStrategy           = "consistent-hashing"
	DefaultFilterStrategy               = "relabel-config"
	DefaultCollectorNotReadyGracePeriod = 30 * time.Second
	DefaultCRScrapeInterval             = 30 * time.Second
	// NamespaceEnv names the namespace of the collectors when collector_namespace is not set.
	NamespaceEnv = "OTELCOL_NAMESPACE"
)

// Config is the parsed configuration file plus the flags that override it.
type Config struct {
	// ListenAddr is the HTTP API address (listen_addr, --listen-addr).
	ListenAddr string
	// KubeConfigPath is the kubeconfig file (kube_config_file_path, --kubeconfig-path); empty
	// means in-cluster configuration.
	KubeConfigPath string
	// CollectorSelector selects the collector pods; nil means no collectors are watched.
	CollectorSelector *metav1.LabelSelector
	// CollectorNamespace is where collector pods are watched (collector_namespace, else
	// $OTELCOL_NAMESPACE).
	CollectorNamespace string
	// Prometheus is the config section parsed as a Prometheus configuration; never nil.
	Prometheus *promconfig.Config
	// AllocationStrategy, AllocationFallbackStrategy and FilterStrategy name the strategies.
	AllocationStrategy         string
	AllocationFallbackStrategy string
	FilterStrategy             string
	// PrometheusCR is the prometheus_cr section.
	PrometheusCR PrometheusCR
	// HTTPS is the https section.
	HTTPS HTTPS
	// CollectorNotReadyGracePeriod: a collector pod not Running or not Ready for longer than this
	// gets no targets; zero disables the check.
	CollectorNotReadyGracePeriod time.Duration
	// AllowInsecureAuthSecrets lets prometheus_cr reference secrets over plain HTTP.
	AllowInsecureAuthSecrets bool
	// Warnings name keys of the file that are not understood; upstream ignores them too, so
	// they are reported, not fatal.
	Warnings []string
}

// PrometheusCR is the prometheus_cr section: discovery of ServiceMonitor, PodMonitor,
// ScrapeConfig and Probe resources of the Prometheus Operator.
type PrometheusCR struct {
	Enabled                bool
	ScrapeInterval         time.Duration
	EvaluationInterval     time.Duration
	ScrapeProtocols        []string
	AllowNamespaces        []string
	DenyNamespaces         []string
	SecretNamespaces       []string
	DenyFSAccessThroughSMs bool
	// ScrapeClasses are scrape_classes: the Prometheus Operator's scrape classes (as in a
	// Prometheus resource's spec.scrapeClasses), which ServiceMonitors, PodMonitors, Probes and
	// ScrapeConfigs name in spec.scrapeClass; the default one applies to those that name none.
	ScrapeClasses                   []monv1.ScrapeClass
	ServiceMonitorSelector          *metav1.LabelSelector
	ServiceMonitorNamespaceSelector *metav1.LabelSelector
	PodMonitorSelector              *metav1.LabelSelector
	PodMonitorNamespaceSelector     *metav1.LabelSelector
	ScrapeConfigSelector            *metav1.LabelSelector
	ScrapeConfigNamespaceSelector   *metav1.LabelSelector
	ProbeSelector                   *metav1.LabelSelector
	ProbeNamespaceSelector          *metav1.LabelSelector
}

// HTTPS is the https section: a second, TLS (optionally mutual TLS) listener that also serves
// secrets in /scrape_configs.
type HTTPS struct {
	Enabled         bool
	ListenAddr      string
	CAFilePath      string
	TLSCertFilePath string
	TLSKeyFilePath  string
}

// Default returns the configuration of an empty file.
func Default() Config {
	return Config{
		ListenAddr:                   DefaultListenAddr,
		KubeConfigPath:               defaultKubeConfigPath(),
		Prometheus:                   emptyPrometheus(),
		AllocationStrategy:           DefaultAllocationStrategy,
		FilterStrategy:               DefaultFilterStrategy,
		CollectorNotReadyGracePeriod: DefaultCollectorNotReadyGracePeriod,
		PrometheusCR:                 PrometheusCR{ScrapeInterval: DefaultCRScrapeInterval},
		HTTPS:                        HTTPS{ListenAddr: DefaultHTTPSListenAddr},
	}
}

// emptyPrometheus is the Prometheus configuration of a file without a config section (what the
// operator writes for a target allocator whose collector lists no scrape configs and which finds
// its targets through prometheus_cr alone): Prometheus' defaults, loaded, so that its scrape
// configs (none) can be read. An unloaded zero Config refuses GetScrapeConfigs, and the allocator
// exited at start with "scrape config cannot be fetched, main config was not validated".
func emptyPrometheus() *promconfig.Config {
	cfg, err := promconfig.Load("", slog.New(slog.DiscardHandler))
	if err != nil {
		panic(fmt.Sprintf("loading an empty Prometheus configuration: %v", err)) // Prometheus' defaults are valid
	}
	return cfg
}

func defaultKubeConfigPath() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".kube", "config")
}

// file mirrors the YAML layout; pointers tell "absent" from "zero".
type file struct {
	ListenAddr                   *string        `yaml:"listen_addr"`
	KubeConfigFilePath           *string        `yaml:"kube_config_file_path"`
	CollectorSelector            map[string]any `yaml:"collector_selector"`
	CollectorNamespace           string         `yaml:"collector_namespace"`
	Config                       map[string]any `yaml:"config"`
	AllocationStrategy           string         `yaml:"allocation_strategy"`
	AllocationFallbackStrategy   string         `yaml:"allocation_fallback_strategy"`
	FilterStrategy               *string        `yaml:"filter_strategy"`
	PrometheusCR                 *crFile        `yaml:"prometheus_cr"`
	HTTPS                        *httpsFile     `yaml:"https"`
	CollectorNotReadyGracePeriod *string        `yaml:"collector_not_ready_grace_period"`
	AllowInsecureAuthSecrets     bool           `yaml:"allow_insecure_auth_secrets"`
}

type crFile struct {
	Enabled                         bool           `yaml:"enabled"`
	ScrapeInterval                  string         `yaml:"scrape_interval"`
	EvaluationInterval              string         `yaml:"evaluation_interval"`
	ScrapeProtocols                 []string       `yaml:"scrape_protocols"`
	ScrapeClasses                   []any          `yaml:"scrape_classes"`
	AllowNamespaces                 []string       `yaml:"allow_namespaces"`
	DenyNamespaces                  []string       `yaml:"deny_namespaces"`
	SecretNamespaces                []string       `yaml:"secret_namespaces"`
	DenyFSAccessThroughSMs          bool           `yaml:"deny_fs_access_through_sms"`
	ServiceMonitorSelector          map[string]any `yaml:"service_monitor_selector"`
	ServiceMonitorNamespaceSelector map[string]any `yaml:"service_monitor_namespace_selector"`
	PodMonitorSelector              map[string]any `yaml:"pod_monitor_selector"`
	PodMonitorNamespaceSelector     map[string]any `yaml:"pod_monitor_namespace_selector"`
	ScrapeConfigSelector            map[string]any `yaml:"scrape_config_selector"`
	ScrapeConfigNamespaceSelector   map[string]any `yaml:"scrape_config_namespace_selector"`
	ProbeSelector                   map[string]any `yaml:"probe_selector"`
	ProbeNamespaceSelector          map[string]any `yaml:"probe_namespace_selector"`
}

type httpsFile struct {
	Enabled         bool   `yaml:"enabled"`
	ListenAddr      string `yaml:"listen_addr"`
	CAFilePath      string `yaml:"ca_file_path"`
	TLSCertFilePath string `yaml:"tls_cert_file_path"`
	TLSKeyFilePath  string `yaml:"tls_key_file_path"`
}

// LoadFile reads and parses path.
func LoadFile(path string, logger *slog.Logger) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	cfg, err := Parse(data, logger)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Parse parses the content of a configuration file over Default. Errors name the key at fault.
func Parse(data []byte, logger *slog.Logger) (Config, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := Default()
	var f file
	if err := yaml.Unmarshal(data, &f); err != nil {
		return cfg, fmt.Errorf("parsing: %w", err)
	}
	var keys map[string]any
	_ = yaml.Unmarshal(data, &keys)
	for k := range keys {
		if !oneOf(k, knownKeys...) {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: unknown key, ignored", k))
		}
	}
	if f.ListenAddr != nil {
		cfg.ListenAddr = *f.ListenAddr
	}
	if f.KubeConfigFilePath != nil {
		cfg.KubeConfigPath = *f.KubeConfigFilePath
	}
	var err error
	if cfg.CollectorSelector, err = selector(f.CollectorSelector, "collector_selector"); err != nil {
		return cfg, err
	}
	cfg.CollectorNamespace = f.CollectorNamespace
	if cfg.CollectorNamespace == "" {
		cfg.CollectorNamespace = os.Getenv(NamespaceEnv)
	}
	if f.Config != nil {
		raw, err := yaml.Marshal(f.Config)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		if cfg.Prometheus, err = promconfig.Load(string(raw), logger); err != nil {
			return cfg, fmt.Errorf("config (a Prometheus configuration): %w", err)
		}
	}
	if f.AllocationStrategy != "" {
		cfg.AllocationStrategy = f.AllocationStrategy
	}
	if !oneOf(cfg.AllocationStrategy, Strategies...) {
		return cfg, fmt.Errorf("allocation_strategy: %q is not one of %v", cfg.AllocationStrategy, Strategies)
	}
	cfg.AllocationFallbackStrategy = f.AllocationFallbackStrategy
	if s := cfg.AllocationFallbackStrategy; s != "" && !oneOf(s, Strategies...) {
		return cfg, fmt.Errorf("allocation_fallback_strategy: %q is not one of %v", s, Strategies)
	}
	if f.FilterStrategy != nil {
		cfg.FilterStrategy = *f.FilterStrategy
	}
	if !oneOf(cfg.FilterStrategy, "", DefaultFilterStrategy) {
		return cfg, fmt.Errorf("filter_strategy: %q is not one of [relabel-config] (or empty for none)", cfg.FilterStrategy)
	}
	if f.CollectorNotReadyGracePeriod != nil {
		if cfg.CollectorNotReadyGracePeriod, err = duration(*f.CollectorNotReadyGracePeriod, "collector_not_ready_grace_period"); err != nil {
			return cfg, err
		}
	}
	cfg.AllowInsecureAuthSecrets = f.AllowInsecureAuthSecrets
	if f.PrometheusCR != nil {
		if cfg.PrometheusCR, err = parseCR(*f.PrometheusCR); err != nil {
			return cfg, err
		}
	}
	if h := f.HTTPS; h != nil {
		cfg.HTTPS = HTTPS{Enabled: h.Enabled, ListenAddr: h.ListenAddr, CAFilePath: h.CAFilePath,
			TLSCertFilePath: h.TLSCertFilePath, TLSKeyFilePath: h.TLSKeyFilePath}
		if cfg.HTTPS.ListenAddr == "" {
			cfg.HTTPS.ListenAddr = DefaultHTTPSListenAddr
		}
	}
	return cfg, nil
}

var knownKeys = []string{"listen_addr", "kube_config_file_path", "collector_selector", "collector_namespace", "config",
	"allocation_strategy", "allocation_fallback_strategy", "filter_strategy", "prometheus_cr", "https",
	"collector_not_ready_grace_period", "allow_insecure_auth_secrets"}

// Strategies are the allocation strategies the allocator knows.
var Strategies = []string{"consistent-hashing", "least-weighted", "per-node"}

func parseCR(c crFile) (PrometheusCR, error) {
	out := PrometheusCR{Enabled: c.Enabled, ScrapeInterval: DefaultCRScrapeInterval, ScrapeProtocols: c.ScrapeProtocols,
		AllowNamespaces: c.AllowNamespaces, DenyNamespaces: c.DenyNamespaces, SecretNamespaces: c.SecretNamespaces,
		DenyFSAccessThroughSMs: c.DenyFSAccessThroughSMs}
	var err error
	if c.ScrapeInterval != "" {
		if out.ScrapeInterval, err = duration(c.ScrapeInterval, "prometheus_cr.scrape_interval"); err != nil {
			return out, err
		}
	}
	if c.EvaluationInterval != "" {
		if out.EvaluationInterval, err = duration(c.EvaluationInterval, "prometheus_cr.evaluation_interval"); err != nil {
			return out, err
		}
	}
	if out.ScrapeClasses, err = scrapeClasses(c.ScrapeClasses); err != nil {
		return out, err
	}
	for _, s := range []struct {
		key string
		raw map[string]any
		out **metav1.LabelSelector
	}{
		{"service_monitor_selector", c.ServiceMonitorSelector, &out.ServiceMonitorSelector},
		{"service_monitor_namespace_selector", c.ServiceMonitorNamespaceSelector, &out.ServiceMonitorNamespaceSelector},
		{"pod_monitor_selector", c.PodMonitorSelector, &out.PodMonitorSelector},
		{"pod_monitor_namespace_selector", c.PodMonitorNamespaceSelector, &out.PodMonitorNamespaceSelector},
		{"scrape_config_selector", c.ScrapeConfigSelector, &out.ScrapeConfigSelector},
		{"scrape_config_namespace_selector", c.ScrapeConfigNamespaceSelector, &out.ScrapeConfigNamespaceSelector},
		{"probe_selector", c.ProbeSelector, &out.ProbeSelector},
		{"probe_namespace_selector", c.ProbeNamespaceSelector, &out.ProbeNamespaceSelector},
	} {
		if *s.out, err = selector(s.raw, "prometheus_cr."+s.key); err != nil {
			return out, err
		}
	}
	return out, nil
}

// scrapeClasses reads prometheus_cr.scrape_classes with the Prometheus Operator's field names;
// names must be set and unique, and at most one class may be the default.
func scrapeClasses(raw []any) ([]monv1.ScrapeClass, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	b, err := yaml.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("prometheus_cr.scrape_classes: %w", err)
	}
	var out []monv1.ScrapeClass
	if err := sigsyaml.UnmarshalStrict(b, &out); err != nil {
		return nil, fmt.Errorf("prometheus_cr.scrape_classes: %w", err)
	}
	seen, def := map[string]bool{}, ""
	for i, c := range out {
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("prometheus_cr.scrape_classes[%d].name: required", i)
		case seen[c.Name]:
			return nil, fmt.Errorf("prometheus_cr.scrape_classes[%d].name: %q is defined twice", i, c.Name)
		case c.Default != nil && *c.Default && def != "":
			return nil, fmt.Errorf("prometheus_cr.scrape_classes[%d].default: %q and %q are both the default; at most one may be", i, def, c.Name)
		}
		seen[c.Name] = true
		if c.Default != nil && *c.Default {
			def = c.Name
		}
	}
	return out, nil
}

// selector accepts both spellings of the selector keys: matchlabels/matchexpressions (what the
// YAML v2 encoder of the operator writes) and matchLabels/matchExpressions.
func selector(raw map[string]any, key string) (*metav1.LabelSelector, error) {
	if raw == nil {
		return nil, nil
	}
	type expr struct {
		Key      string   `yaml:"key"`
		Operator string   `yaml:"operator"`
		Values   []string `yaml:"values"`
	}
	var labels map[string]string
	var exprs []expr
	for k, v := range raw {
		b, err := yaml.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", key, k, err)
		}
		switch k {
		case "matchlabels", "matchLabels":
			err = yaml.UnmarshalStrict(b, &labels)
		case "matchexpressions", "matchExpressions":
			err = yaml.UnmarshalStrict(b, &exprs)
		default:
			err = errors.New("unknown key; allowed are matchLabels and matchExpressions")
		}
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", key, k, err)
		}
	}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	for _, e := range exprs {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: e.Key, Operator: metav1.LabelSelectorOperator(e.Operator), Values: e.Values})
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return sel, nil
}

func duration(s, key string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration such as 30s or 1m0s", key, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: %q is negative", key, s)
	}
	return d, nil
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}
