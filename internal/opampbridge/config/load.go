package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Flag names, as upstream's.
const (
	flagConfigFile        = "config-file"
	flagListenAddr        = "listen-addr"
	flagHealthListenAddr  = "health-listen-addr"
	flagKubeconfig        = "kubeconfig-path"
	flagHeartbeatInterval = "heartbeat-interval"
	flagName              = "name"
	flagMode              = "mode"
	flagLeaderElect       = "leader-elect"
	flagSyncTimeout       = "informer-sync-timeout"
)

// NewFlagSet returns the bridge's flags with upstream's names and defaults. Callers may add more
// (e.g. zap's logging flags) before passing it to Load.
func NewFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("operator-opamp-bridge", pflag.ContinueOnError)
	fs.String(flagConfigFile, DefaultConfigFilePath, "Path of the bridge's configuration file (remoteconfiguration.yaml).")
	fs.String(flagListenAddr, DefaultListenAddr, "Address the OpAMP proxy server for collectors listens on.")
	fs.String(flagHealthListenAddr, DefaultHealthListenAddr, "Address /healthz and /metrics listen on.")
	fs.String(flagKubeconfig, "", "Path of a kubeconfig file; empty uses the in-cluster configuration.")
	fs.Duration(flagHeartbeatInterval, DefaultHeartbeatInterval, "How often health is re-sent to the OpAMP server; 0 disables the heartbeat.")
	fs.String(flagName, DefaultName, "Name of the bridge; collectors labelled opentelemetry.io/opamp-managed=<name> are managed by it.")
	fs.String(flagMode, string(ModeOperator), "Where collectors come from: operator (OpenTelemetryCollector resources).")
	fs.Bool(flagLeaderElect, false, "Run several replicas: only the holder of a Lease connects to the server, applies configuration and serves the proxy; standbys are ready once synced (/readyz) and their proxy answers 503 with Retry-After.")
	fs.Duration(flagSyncTimeout, DefaultSyncTimeout, "How long to wait for the first list of collectors and pods before exiting with an error; /healthz fails until then.")
	return fs
}

// Load parses args into fs (made by NewFlagSet), reads the configuration file after expanding
// ${VAR} references with getenv, lets flags given on the command line override the file, and
// validates the result.
func Load(fs *pflag.FlagSet, args []string, getenv func(string) string) (*Config, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	str := func(name string) string { v, _ := fs.GetString(name); return v }
	hb, _ := fs.GetDuration(flagHeartbeatInterval)
	le, _ := fs.GetBool(flagLeaderElect)
	syncTimeout, _ := fs.GetDuration(flagSyncTimeout)
	cfg := &Config{
		ListenAddr:         str(flagListenAddr),
		HealthListenAddr:   str(flagHealthListenAddr),
		KubeConfigFilePath: str(flagKubeconfig),
		HeartbeatInterval:  hb,
		Name:               str(flagName),
		Mode:               Mode(str(flagMode)),
		LeaderElection:     le,
		SyncTimeout:        syncTimeout,
		ConfigFilePath:     str(flagConfigFile),
	}
	data, err := os.ReadFile(cfg.ConfigFilePath)
	if err != nil {
		return nil, fmt.Errorf("reading the configuration file (--%s): %w", flagConfigFile, err)
	}
	if err := Parse(data, getenv, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.ConfigFilePath, err)
	}
	// Flags given explicitly win over the file.
	fs.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case flagListenAddr:
			cfg.ListenAddr = f.Value.String()
		case flagHealthListenAddr:
			cfg.HealthListenAddr = f.Value.String()
		case flagKubeconfig:
			cfg.KubeConfigFilePath = f.Value.String()
		case flagHeartbeatInterval:
			cfg.HeartbeatInterval = hb
		case flagName:
			cfg.Name = f.Value.String()
		case flagMode:
			cfg.Mode = Mode(f.Value.String())
		}
	})
	cfg.Namespace = firstNonEmpty(getenv("OTELCOL_NAMESPACE"), getenv("POD_NAMESPACE"), inClusterNamespace(), "default")
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration in %s:\n%w", cfg.ConfigFilePath, err)
	}
	return cfg, nil
}

// Parse decodes a configuration file into cfg, keeping cfg's values for keys the file leaves out.
// ${VAR} and $VAR are expanded with getenv first, as upstream does. Unknown keys are errors.
func Parse(data []byte, getenv func(string) string, cfg *Config) error {
	expanded := os.Expand(string(data), getenv)
	dec := yaml.NewDecoder(strings.NewReader(expanded))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0 {
			return errors.New("the file is empty")
		}
		return err
	}
	return nil
}

func inClusterNamespace() string {
	data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
