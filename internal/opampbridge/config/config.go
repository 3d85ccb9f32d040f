// Package config loads the OpAMP bridge's settings: upstream's command-line flags and its
// remoteconfiguration.yaml file format, merged with the same precedence (flag defaults, then the file
// after environment expansion, then flags given on the command line), and validated with errors that
// name the offending field.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Defaults, as upstream's.
const (
	DefaultConfigFilePath    = "/conf/remoteconfiguration.yaml"
	DefaultListenAddr        = ":8080"
	DefaultHealthListenAddr  = ":8081"
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultName              = "opamp-bridge"
	// DefaultSyncTimeout bounds the wait for the collector informers' first sync.
	DefaultSyncTimeout = time.Minute
	// DefaultMaxMessageBytes is the largest OpAMP message the proxy accepts (the spec recommends 64 MiB).
	DefaultMaxMessageBytes = 64 << 20
)

// Mode says where the bridge finds the collectors it reports on.
type Mode string

// Modes.
const (
	// ModeOperator manages OpenTelemetryCollector resources (the default).
	ModeOperator Mode = "operator"
	// ModeStandalone manages plain ConfigMaps; this implementation does not support it yet.
	ModeStandalone Mode = "standalone"
)

// TLS are the client's TLS options for the OpAMP server connection.
type TLS struct {
	// Insecure disables TLS (plain ws:// or http://).
	Insecure bool `yaml:"insecure,omitempty"`
	// InsecureSkipVerify keeps TLS but does not verify the server certificate.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify,omitempty"`
	// CAFile is a PEM bundle used to verify the server instead of the system roots.
	CAFile string `yaml:"ca_file,omitempty"`
	// CertFile and KeyFile are a client certificate for mutual TLS.
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is the client certificate's private key.
	KeyFile string `yaml:"key_file,omitempty"`
}

// Proxy is an explicit HTTP proxy used for the OpAMP server connection only.
type Proxy struct {
	// URL of the proxy.
	URL string `yaml:"url,omitempty"`
	// Headers sent to the proxy on CONNECT.
	Headers map[string]string `yaml:"headers,omitempty"`
}

// AgentDescription adds attributes to the bridge's agent description.
type AgentDescription struct {
	// NonIdentifyingAttributes are added to the description's non-identifying attributes.
	NonIdentifyingAttributes map[string]string `yaml:"non_identifying_attributes,omitempty"`
}

// ProxyServer configures the bridge's own OpAMP server, which collectors' opamp extensions connect
// to. Upstream has no such block: its proxy is always plain and unauthenticated.
type ProxyServer struct {
	// CertFile and KeyFile enable TLS on the proxy.
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is the proxy certificate's private key.
	KeyFile string `yaml:"key_file,omitempty"`
	// BearerTokenFile, when set, makes the proxy require "Authorization: Bearer <token>".
	BearerTokenFile string `yaml:"bearerTokenFile,omitempty"`
	// MaxMessageBytes bounds one incoming OpAMP message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int64 `yaml:"maxMessageBytes,omitempty"`
}

// Config is the bridge's configuration. YAML keys are upstream's.
type Config struct {
	Endpoint           string              `yaml:"endpoint"`
	TLS                TLS                 `yaml:"tls,omitempty"`
	Headers            map[string]string   `yaml:"headers,omitempty"`
	Proxy              *Proxy              `yaml:"proxy,omitempty"`
	Capabilities       map[string]bool     `yaml:"capabilities"`
	ComponentsAllowed  map[string][]string `yaml:"componentsAllowed,omitempty"`
	HeartbeatInterval  time.Duration       `yaml:"heartbeatInterval,omitempty"`
	Name               string              `yaml:"name,omitempty"`
	Description        AgentDescription    `yaml:"description,omitempty"`
	ListenAddr         string              `yaml:"listenAddr,omitempty"`
	HealthListenAddr   string              `yaml:"healthListenAddr,omitempty"`
	KubeConfigFilePath string              `yaml:"kubeConfigFilePath,omitempty"`
	Mode               Mode                `yaml:"mode,omitempty"`
	ProxyServer        ProxyServer         `yaml:"proxyServer,omitempty"`
	// Namespaces limits the collectors the bridge reports on and changes to these namespaces;
	// empty means: report on every namespace, change collectors of the bridge's own namespace
	// only. Upstream has no such key.
	Namespaces []string `yaml:"namespaces,omitempty"`
	// FieldsAllowed lists the collector spec fields besides config (and upgradeStrategy) that a
	// remote configuration may change: replicas, resources, env (plain values only). Empty means
	// spec.config only. Upstream has no such key (its server may change everything).
	FieldsAllowed []string `yaml:"fieldsAllowed,omitempty"`

	// Namespace is where the bridge keeps its identity ConfigMap and its leader-election Lease
	// (from OTELCOL_NAMESPACE or POD_NAMESPACE; not part of the file).
	Namespace string `yaml:"-"`
	// LeaderElection lets several replicas run; only the Lease holder connects and applies.
	LeaderElection bool `yaml:"-"`
	// ConfigFilePath is where the file was read from.
	ConfigFilePath string `yaml:"-"`
	// SyncTimeout bounds the wait for the collector informers' first sync (--informer-sync-timeout).
	SyncTimeout time.Duration `yaml:"-"`
}

// fieldsAllowed are the values of FieldsAllowed (collectors.WritableFields).
var fieldsAllowed = map[string]bool{"replicas": true, "resources": true, "env": true}

// componentKinds are the sections of a collector config that componentsAllowed may restrict.
var componentKinds = map[string]bool{"receivers": true, "processors": true, "exporters": true, "connectors": true, "extensions": true}

// Validate reports every problem in c at once.
func (c *Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Endpoint) == "" {
		errs = append(errs, errors.New("endpoint: the OpAMP server endpoint is not specified"))
	} else if u, err := url.Parse(c.Endpoint); err != nil {
		errs = append(errs, fmt.Errorf("endpoint: %w", err))
	} else if !map[string]bool{"ws": true, "wss": true, "http": true, "https": true}[u.Scheme] || u.Host == "" {
		errs = append(errs, fmt.Errorf("endpoint %q: want ws://, wss://, http:// or https://host[:port]/path", c.Endpoint))
	}
	if c.TLS.Insecure && c.TLS.InsecureSkipVerify {
		errs = append(errs, errors.New("tls: insecure and insecure_skip_verify are mutually exclusive"))
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs = append(errs, errors.New("tls: cert_file and key_file must be set together"))
	}
	if len(c.Capabilities) == 0 {
		errs = append(errs, errors.New("capabilities: none specified"))
	}
	if _, err := c.AgentCapabilities(); err != nil {
		errs = append(errs, err)
	}
	for kind := range c.ComponentsAllowed {
		if !componentKinds[kind] {
			errs = append(errs, fmt.Errorf("componentsAllowed.%s: unknown section (want receivers, processors, exporters, connectors or extensions)", kind))
		}
	}
	if c.SyncTimeout < 0 {
		errs = append(errs, fmt.Errorf("--informer-sync-timeout: %s is negative", c.SyncTimeout))
	}
	if c.HeartbeatInterval < 0 {
		errs = append(errs, fmt.Errorf("heartbeatInterval: %s is negative", c.HeartbeatInterval))
	}
	if msgs := ValidateName(c.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("name %q: %s", c.Name, strings.Join(msgs, "; ")))
	}
	switch c.Mode {
	case ModeOperator:
	case ModeStandalone:
		errs = append(errs, errors.New("mode: standalone is not supported by this bridge; use operator"))
	default:
		errs = append(errs, fmt.Errorf("mode %q: want operator", c.Mode))
	}
	if c.Proxy != nil && c.Proxy.URL != "" {
		if _, err := url.Parse(c.Proxy.URL); err != nil {
			errs = append(errs, fmt.Errorf("proxy.url: %w", err))
		}
	}
	if (c.ProxyServer.CertFile == "") != (c.ProxyServer.KeyFile == "") {
		errs = append(errs, errors.New("proxyServer: cert_file and key_file must be set together"))
	}
	for i, ns := range c.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("namespaces[%d] %q: %s", i, ns, strings.Join(msgs, "; ")))
		}
	}
	for i, f := range c.FieldsAllowed {
		if !fieldsAllowed[f] {
			errs = append(errs, fmt.Errorf("fieldsAllowed[%d] %q: want replicas, resources or env", i, f))
		}
	}
	if c.ProxyServer.MaxMessageBytes < 0 {
		errs = append(errs, errors.New("proxyServer.maxMessageBytes: must not be negative"))
	}
	return errors.Join(errs...)
}

// UnstartableCapabilities are the capabilities opamp-go cannot start with (see
// v1alpha1.OpAMPBridgeUnstartableCapabilities, which the webhook shares).
var UnstartableCapabilities = v1alpha1.OpAMPBridgeUnstartableCapabilities

// ValidateName checks a bridge name (see v1alpha1.ValidateOpAMPBridgeName, which the webhook shares).
func ValidateName(name string) []string { return v1alpha1.ValidateOpAMPBridgeName(name) }

// AgentCapabilities turns the capability map into protocol bits. ReportsStatus is always set, as
// the protocol requires. Names are the protocol's without the "AgentCapabilities_" prefix.
func (c *Config) AgentCapabilities() (protobufs.AgentCapabilities, error) {
	caps := protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus
	var errs []error
	for name, on := range c.Capabilities {
		v, ok := protobufs.AgentCapabilities_value["AgentCapabilities_"+name]
		if !ok || name == "Unspecified" {
			errs = append(errs, fmt.Errorf("capabilities.%s: unknown capability", name))
			continue
		}
		if why, bad := UnstartableCapabilities[name]; bad && on {
			errs = append(errs, fmt.Errorf("capabilities.%s: cannot be turned on: %s", name, why))
			continue
		}
		if on {
			caps |= protobufs.AgentCapabilities(v)
		}
	}
	return caps, errors.Join(errs...)
}

// HasCapability reports whether the named capability is enabled.
func (c *Config) HasCapability(name string) bool {
	return name == "ReportsStatus" || c.Capabilities[name]
}

// MaxMessageBytes is the proxy's message size limit.
func (c *Config) MaxMessageBytes() int64 {
	if c.ProxyServer.MaxMessageBytes == 0 {
		return DefaultMaxMessageBytes
	}
	return c.ProxyServer.MaxMessageBytes
}
