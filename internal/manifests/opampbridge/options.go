package opampbridge

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/version"
)

// ImageName is the name of this project's bridge image (and binary).
const ImageName = "operator-opamp-bridge"

// DefaultVersion is the bridge version the operator deploys when spec.image is empty: the
// operator's own version, since the default image is this project's bridge of the same build.
var DefaultVersion = version.Version

// DefaultImage is the --operator-opamp-bridge-image default: this project's bridge image of the
// operator's version (version.Image). Upstream's bridge image is not the default because it exits
// on the --leader-elect flag the operator passes when spec.replicas > 1.
var DefaultImage = version.Image(ImageName)

// DefaultHeartbeatInterval is how often the bridge re-sends its health, as upstream's bridge
// default.
const DefaultHeartbeatInterval = 30 * time.Second

// Fixed names and values of the generated objects, as upstream's.
const (
	// ComponentOpAMPBridge is the app.kubernetes.io/component value of every generated object.
	ComponentOpAMPBridge = "opentelemetry-opamp-bridge"
	// ContainerName is the bridge's container in the pod.
	ContainerName = "opamp-bridge-container"
	// ConfigMapVolume is the pod volume that mounts the ConfigMap.
	ConfigMapVolume = "opamp-bridge-internal"
	// ConfigMapKey is the ConfigMap key holding the bridge configuration file.
	ConfigMapKey = "remoteconfiguration.yaml"
	// ConfigMountPath is where the ConfigMap is mounted; the bridge reads
	// ConfigMountPath/ConfigMapKey by default.
	ConfigMountPath = "/conf"
	// ConfigHashAnnotation holds the sha256 of the configuration file, so that a configuration
	// change rolls the pod.
	ConfigHashAnnotation = "opentelemetry-opampbridge-config/hash"
	// ProxyTLSVolume and ProxyTLSMountPath hold spec.proxyServer.tlsSecretName's tls.crt and tls.key.
	ProxyTLSVolume    = "opamp-bridge-proxy-tls"
	ProxyTLSMountPath = "/etc/opamp-bridge/proxy-tls"
	// ProxyTokenVolume and ProxyTokenMountPath hold spec.proxyServer.bearerTokenSecret's key, as
	// the file "token".
	ProxyTokenVolume    = "opamp-bridge-proxy-token"
	ProxyTokenMountPath = "/etc/opamp-bridge/proxy-token"
	// NamespaceEnv tells the bridge its namespace.
	NamespaceEnv = "OTELCOL_NAMESPACE"

	// OpAMPPortName and OpAMPPort are the bridge's OpAMP proxy for collectors' opamp extensions.
	OpAMPPortName = "opamp"
	OpAMPPort     = 8080
	// HealthPortName and HealthPort serve /healthz and /metrics.
	HealthPortName = "healthz"
	HealthPort     = 8081
	// ServicePortName and ServicePort are the Service port in front of OpAMPPort.
	ServicePortName = "opamp-bridge"
	ServicePort     = 80
)

// Options are the operator-wide inputs of the builders. Start from DefaultOptions.
type Options struct {
	// Image is used when spec.image is empty (--operator-opamp-bridge-image).
	Image string
	// HeartbeatInterval is passed to the bridge (--heartbeat-interval); zero disables the
	// heartbeat, negative values mean DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// LabelsFilter and AnnotationsFilter are upstream's --labels-filter and --annotations-filter:
	// matching keys of the resource are not copied to the generated objects.
	LabelsFilter      []string
	AnnotationsFilter []string
	// SetGolangFlags is the operator.golang.flags gate: GOMEMLIMIT and GOMAXPROCS come from the
	// container's resource limits.
	SetGolangFlags bool
	// ProxyEnv is appended to the container's environment: the operator's own HTTP_PROXY,
	// HTTPS_PROXY and NO_PROXY variables (and lower-case forms).
	ProxyEnv []corev1.EnvVar
}

// DefaultOptions returns the options of an operator started without flags.
func DefaultOptions() Options {
	return Options{
		Image:             DefaultImage,
		HeartbeatInterval: DefaultHeartbeatInterval,
		AnnotationsFilter: []string{manifestutils.LastAppliedAnnotation},
		SetGolangFlags:    true,
	}
}

// Name returns "<name>-opamp-bridge", the name of every object generated for the OpAMPBridge
// called name (Deployment, ConfigMap, ServiceAccount and Service).
func Name(name string) string {
	return naming.DNSName(naming.Truncate("%s-opamp-bridge", 63, name))
}
