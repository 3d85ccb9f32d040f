package config

import (
	"log/slog"

	"github.com/spf13/pflag"
)

// Flags are upstream's command-line flags. A flag given on the command line overrides the file.
type Flags struct {
	ConfigFile      string
	ListenAddr      string
	PrometheusCR    bool
	KubeConfigPath  string
	HTTPSEnabled    bool
	HTTPSListenAddr string
	HTTPSCAFile     string
	HTTPSCertFile   string
	HTTPSKeyFile    string
	LogLevel        string
	InsecureSecrets bool

	fs *pflag.FlagSet
}

// NewFlags registers the flags on fs.
func NewFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVar(&f.ConfigFile, "config-file", DefaultConfigFilePath, "The path to the configuration file (targetallocator.yaml).")
	fs.StringVar(&f.ListenAddr, "listen-addr", DefaultListenAddr, "The address the HTTP API, probes and metrics are served on.")
	fs.BoolVar(&f.PrometheusCR, "enable-prometheus-cr-watcher", false, "Discover targets from Prometheus Operator resources (ServiceMonitor, PodMonitor).")
	fs.StringVar(&f.KubeConfigPath, "kubeconfig-path", defaultKubeConfigPath(), "The kubeconfig file; when it does not exist the in-cluster configuration is used.")
	fs.BoolVar(&f.HTTPSEnabled, "enable-https-server", false, "Also serve the API over HTTPS (secrets are shown in /scrape_configs only there).")
	fs.StringVar(&f.HTTPSListenAddr, "listen-addr-https", DefaultHTTPSListenAddr, "The address the HTTPS API is served on.")
	fs.StringVar(&f.HTTPSCAFile, "https-ca-file", "", "CA file for client certificates of the HTTPS server (mutual TLS; required with --enable-https-server: scrape secrets are served only to clients with a certificate it signed).")
	fs.StringVar(&f.HTTPSCertFile, "https-tls-cert-file", "", "Certificate file of the HTTPS server.")
	fs.StringVar(&f.HTTPSKeyFile, "https-tls-key-file", "", "Key file of the HTTPS server.")
	fs.BoolVar(&f.InsecureSecrets, "allow-insecure-auth-secrets", false, "Serve scrape secrets in /scrape_configs over plain HTTP too (only where the connection is secured otherwise, e.g. a service mesh).")
	fs.StringVar(&f.LogLevel, "zap-log-level", "info", "Log level: debug, info, warn or error.")
	// Upstream's other zap flags are accepted so that spec.args written for upstream's image
	// still start ours; logs are always JSON.
	fs.Bool("zap-devel", false, "Accepted for compatibility; ignored.")
	fs.String("zap-encoder", "json", "Accepted for compatibility; logs are JSON.")
	fs.String("zap-stacktrace-level", "error", "Accepted for compatibility; ignored.")
	fs.String("zap-time-encoding", "epoch", "Accepted for compatibility; ignored.")
	return f
}

// Apply overrides cfg with the flags that were given on the command line.
func (f *Flags) Apply(cfg *Config) {
	if f.fs.Changed("listen-addr") {
		cfg.ListenAddr = f.ListenAddr
	}
	if f.fs.Changed("enable-prometheus-cr-watcher") {
		cfg.PrometheusCR.Enabled = f.PrometheusCR
	}
	if f.fs.Changed("kubeconfig-path") {
		cfg.KubeConfigPath = f.KubeConfigPath
	}
	if f.fs.Changed("enable-https-server") {
		cfg.HTTPS.Enabled = f.HTTPSEnabled
	}
	if f.fs.Changed("listen-addr-https") {
		cfg.HTTPS.ListenAddr = f.HTTPSListenAddr
	}
	if f.fs.Changed("https-ca-file") {
		cfg.HTTPS.CAFilePath = f.HTTPSCAFile
	}
	if f.fs.Changed("https-tls-cert-file") {
		cfg.HTTPS.TLSCertFilePath = f.HTTPSCertFile
	}
	if f.fs.Changed("https-tls-key-file") {
		cfg.HTTPS.TLSKeyFilePath = f.HTTPSKeyFile
	}
	if f.fs.Changed("allow-insecure-auth-secrets") {
		cfg.AllowInsecureAuthSecrets = f.InsecureSecrets
	}
}

// Level is the slog level of --zap-log-level (info when unknown).
func (f *Flags) Level() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(f.LogLevel)); err != nil {
		return slog.LevelInfo
	}
	return l
}
