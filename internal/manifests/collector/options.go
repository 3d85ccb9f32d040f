package collector

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// DefaultCollectorVersion is the collector version the operator deploys when spec.image is empty.
const DefaultCollectorVersion = "0.140.0"

// DefaultCollectorImageRepository is the repository of the default collector image.
const DefaultCollectorImageRepository = "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector"

// Options are the operator-wide inputs of the builders: flags, detected cluster capabilities and
// feature gates, all resolved by the caller. Start from DefaultOptions.
type Options struct {
	// CollectorImage is used when spec.image is empty.
	CollectorImage string
	// CollectorVersion is the version of CollectorImage, reported in status.
	CollectorVersion string
	// TargetAllocatorImage is used by the target allocator when its spec.image is empty.
	TargetAllocatorImage string

	// LabelsFilter and AnnotationsFilter are regular expressions (upstream's --labels-filter and
	// --annotations-filter); matching keys of the custom resource are not copied to the generated
	// objects.
	LabelsFilter      []string
	AnnotationsFilter []string

	// PrometheusCRDs: monitoring.coreos.com ServiceMonitor and PodMonitor are served.
	PrometheusCRDs bool
	// GatewayAPI: gateway.networking.k8s.io HTTPRoute is served.
	GatewayAPI bool
	// OpenShiftRoutes: route.openshift.io Route is served.
	OpenShiftRoutes bool
	// NativeSidecars: the cluster runs init containers with restartPolicy Always as sidecars
	// (Kubernetes 1.29 and later).
	NativeSidecars bool
	// CreateRBAC: the operator may create ClusterRoles and ClusterRoleBindings for collectors.
	CreateRBAC bool
	// CertManager: cert-manager's CRDs are served (reported only: target allocator mTLS uses
	// certificates the operator issues, see TargetAllocatorMTLS).
	CertManager bool

	// SetGolangFlags is the operator.golang.flags gate (beta, on by default): GOMEMLIMIT and
	// GOMAXPROCS come from the container's resource limits.
	SetGolangFlags bool
	// TargetAllocatorMTLS is the operator.targetallocator.mtls gate: collectors whose embedded target
	// allocator discovers Prometheus Operator resources (spec.targetAllocator.prometheusCR, unless
	// spec.targetAllocator.mtls decides) talk to it over mutual TLS with the client certificate the
	// operator issues (manifestutils.TargetAllocatorMTLS).
	TargetAllocatorMTLS bool
	// OperandNetworkPolicy is the operand.networkpolicy gate (beta, on by default): the defaulting
	// webhook turns spec.networkPolicy.enabled on when it is unset.
	OperandNetworkPolicy bool
	// LegacyTelemetryShape is the inverse of the operator.collector.usedefaulttelemetryshape gate
	// (on by default); see collectorconfig.DefaultOptions.
	LegacyTelemetryShape bool

	// ProxyEnv is appended to the collector container's environment: the operator's own
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY variables (and lower-case forms), in that order.
	ProxyEnv []corev1.EnvVar
}

// DefaultOptions returns the options of an operator started without flags on a cluster with no
// optional APIs: the default collector image, the default annotation filter (kubectl's
// last-applied-configuration) and the feature gates at their default stages.
func DefaultOptions() Options {
	return Options{
		CollectorImage:       DefaultCollectorImageRepository + ":" + DefaultCollectorVersion,
		CollectorVersion:     DefaultCollectorVersion,
		TargetAllocatorImage: manifestutils.TargetAllocatorImage,
		AnnotationsFilter:    []string{manifestutils.LastAppliedAnnotation},
		SetGolangFlags:       true,
		OperandNetworkPolicy: true,
	}
}

// taMTLS reports whether col's pods use mutual TLS towards its embedded target allocator.
func (o Options) taMTLS(col *v1beta1.OpenTelemetryCollector) bool {
	ta := col.Spec.TargetAllocator
	return ta.Enabled && manifestutils.TargetAllocatorMTLS(ta.Mtls, ta.PrometheusCR.Enabled, o.TargetAllocatorMTLS)
}
