package v1alpha1

// ManagementStateType says whether the operator reconciles a resource.
//
// +kubebuilder:validation:Enum=managed;unmanaged
type ManagementStateType string

const (
	// ManagementStateManaged means the operator reconciles the resource (the default).
	ManagementStateManaged ManagementStateType = "managed"
	// ManagementStateUnmanaged means the operator leaves the resource and its objects alone.
	ManagementStateUnmanaged ManagementStateType = "unmanaged"
)

// Mode is how the collector is deployed.
//
// +kubebuilder:validation:Enum=daemonset;deployment;sidecar;statefulset
type Mode string

const (
	// ModeDaemonSet runs one collector pod per node.
	ModeDaemonSet Mode = "daemonset"
	// ModeDeployment runs the collector as a Deployment (the default).
	ModeDeployment Mode = "deployment"
	// ModeSidecar injects the collector into annotated pods.
	ModeSidecar Mode = "sidecar"
	// ModeStatefulSet runs the collector as a StatefulSet.
	ModeStatefulSet Mode = "statefulset"
)

// UpgradeStrategy says whether the operator migrates a resource to newer versions.
//
// +kubebuilder:validation:Enum=automatic;none
type UpgradeStrategy string

const (
	// UpgradeStrategyAutomatic lets the operator migrate the resource (the default).
	UpgradeStrategyAutomatic UpgradeStrategy = "automatic"
	// UpgradeStrategyNone leaves the resource as it is.
	UpgradeStrategyNone UpgradeStrategy = "none"
)

// IngressType is the kind of object that exposes the collector.
//
// +kubebuilder:validation:Enum=ingress;route
type IngressType string

const (
	// IngressTypeIngress exposes the collector with a networking.k8s.io Ingress.
	IngressTypeIngress IngressType = "ingress"
	// IngressTypeRoute exposes the collector with OpenShift Routes.
	IngressTypeRoute IngressType = "route"
)

// TLSRouteTerminationType is the TLS termination of an OpenShift Route.
//
// +kubebuilder:validation:Enum=insecure;edge;passthrough;reencrypt
type TLSRouteTerminationType string

const (
	// TLSRouteTerminationTypeInsecure serves plain HTTP.
	TLSRouteTerminationTypeInsecure TLSRouteTerminationType = "insecure"
	// TLSRouteTerminationTypeEdge terminates TLS at the router.
	TLSRouteTerminationTypeEdge TLSRouteTerminationType = "edge"
	// TLSRouteTerminationTypePassthrough passes TLS through to the collector.
	TLSRouteTerminationTypePassthrough TLSRouteTerminationType = "passthrough"
	// TLSRouteTerminationTypeReencrypt terminates TLS at the router and re-encrypts.
	TLSRouteTerminationTypeReencrypt TLSRouteTerminationType = "reencrypt"
)

// IngressRuleType is how the receivers are laid out in the Ingress.
//
// +kubebuilder:validation:Enum=path;subdomain
type IngressRuleType string

const (
	// IngressRuleTypePath gives each receiver port a path on the hostname.
	IngressRuleTypePath IngressRuleType = "path"
	// IngressRuleTypeSubdomain gives each receiver port its own subdomain of the hostname.
	IngressRuleTypeSubdomain IngressRuleType = "subdomain"
)

// OpenTelemetryTargetAllocatorAllocationStrategy is how the target allocator shares targets
// among collectors.
//
// +kubebuilder:validation:Enum=least-weighted;consistent-hashing;per-node
type OpenTelemetryTargetAllocatorAllocationStrategy string

const (
	// OpenTelemetryTargetAllocatorAllocationStrategyLeastWeighted gives each target to the
	// collector with the fewest targets.
	OpenTelemetryTargetAllocatorAllocationStrategyLeastWeighted OpenTelemetryTargetAllocatorAllocationStrategy = "least-weighted"
	// OpenTelemetryTargetAllocatorAllocationStrategyConsistentHashing gives each target to a
	// collector by a consistent hash (the default).
	OpenTelemetryTargetAllocatorAllocationStrategyConsistentHashing OpenTelemetryTargetAllocatorAllocationStrategy = "consistent-hashing"
	// OpenTelemetryTargetAllocatorAllocationStrategyPerNode gives each target to the collector
	// on the target's node.
	OpenTelemetryTargetAllocatorAllocationStrategyPerNode OpenTelemetryTargetAllocatorAllocationStrategy = "per-node"
)
