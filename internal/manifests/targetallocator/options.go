package targetallocator

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// DefaultVersion is the target allocator version the operator deploys when spec.image is empty:
// the operator's own, since the default image is this project's allocator of the same build.
var DefaultVersion = manifestutils.TargetAllocatorVersion

// DefaultImage is the --target-allocator-image default: this project's target allocator image
// (manifestutils.TargetAllocatorImage).
var DefaultImage = manifestutils.TargetAllocatorImage

// Fixed names and values of the generated objects, as upstream's.
const (
	// ComponentTargetAllocator is the app.kubernetes.io/component value of every generated object.
	ComponentTargetAllocator = manifestutils.ComponentTargetAllocator
	// ContainerName is the target allocator's container in the pod.
	ContainerName = "ta-container"
	// ConfigMapVolume is the pod volume that mounts the ConfigMap.
	ConfigMapVolume = "ta-internal"
	// ConfigMapKey is the ConfigMap key holding the target allocator configuration file.
	ConfigMapKey = "targetallocator.yaml"
	// ConfigMountPath is where the ConfigMap is mounted; the target allocator reads
	// ConfigMountPath/ConfigMapKey by default.
	ConfigMountPath = "/conf"
	// ConfigHashAnnotation holds the sha256 of the configuration file in the pod template, so that
	// a configuration change rolls the pod.
	ConfigHashAnnotation = "opentelemetry-targetallocator-config/hash"
	// NamespaceEnv tells the target allocator the namespace of the collectors it serves.
	NamespaceEnv = "OTELCOL_NAMESPACE"
	// CollectorLabel on a collector names the TargetAllocator it uses (besides owner references).
	CollectorLabel = manifestutils.LabelTargetAllocator

	// HTTPPortName and HTTPPort are the target allocator's HTTP API (targets, probes, metrics).
	HTTPPortName = "http"
	HTTPPort     = 8080
	// ServicePortName and ServicePort are the Service port collectors connect to.
	ServicePortName = "targetallocation"
	ServicePort     = 80
	// APIServerPort is the only egress the NetworkPolicy allows: the Kubernetes API server.
	APIServerPort = 6443
)

// Options are the operator-wide inputs of the builders. Start from DefaultOptions.
type Options struct {
	// Image is used when spec.image is empty (--target-allocator-image).
	Image string
	// LabelsFilter and AnnotationsFilter are upstream's --labels-filter and --annotations-filter:
	// matching keys of the resource are not copied to the generated objects.
	LabelsFilter      []string
	AnnotationsFilter []string
	// SetGolangFlags is the operator.golang.flags gate: GOMEMLIMIT and GOMAXPROCS come from the
	// container's resource limits.
	SetGolangFlags bool
	// FallbackStrategy is the operator.targetallocator.fallbackstrategy gate (alpha): the file
	// sets allocation_fallback_strategy consistent-hashing, used by per-node for targets on nodes
	// without a collector.
	FallbackStrategy bool
	// MTLS is the operator.targetallocator.mtls gate: target allocators with spec.prometheusCR
	// enabled (and no spec.mtls) serve their API over mutual TLS with certificates the operator
	// issues (see MTLSEnabled).
	MTLS bool
	// PrometheusCRDs: monitoring.coreos.com ServiceMonitor is served, so the ServiceMonitor of
	// spec.observability.metrics.enableMetrics can be generated.
	PrometheusCRDs bool
	// ProxyEnv is appended to the container's environment: the operator's own HTTP_PROXY,
	// HTTPS_PROXY and NO_PROXY variables (and lower-case forms).
	ProxyEnv []corev1.EnvVar
}

// DefaultOptions returns the options of an operator started without flags on a cluster with no
// optional APIs.
func DefaultOptions() Options {
	return Options{
		Image:             DefaultImage,
		AnnotationsFilter: []string{manifestutils.LastAppliedAnnotation},
		SetGolangFlags:    true,
	}
}

// Name returns "<name>-targetallocator", the name of the Deployment, ConfigMap, ServiceAccount,
// Service, PodDisruptionBudget and ServiceMonitor generated for the TargetAllocator called name.
func Name(name string) string { return naming.TargetAllocator(name) }

// NetworkPolicyName returns "<name>-targetallocator-networkpolicy".
func NetworkPolicyName(name string) string {
	return naming.DNSName(naming.Truncate("%s-targetallocator-networkpolicy", 63, name))
}
