package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

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

// MetricSpec is one entry of the autoscaler's metrics list; only the Pods source type is
// supported besides the CPU and memory targets of AutoscalerSpec.
type MetricSpec struct {
	// Type is the kind of metric source; only "Pods" is supported.
	Type autoscalingv2.MetricSourceType `json:"type"`
	// Pods describes a metric averaged over the collector pods.
	// +optional
	Pods *autoscalingv2.PodsMetricSource `json:"pods,omitempty"`
}

// AutoscalerSpec configures the HorizontalPodAutoscaler generated for a workload.
type AutoscalerSpec struct {
	// MinReplicas is the lowest replica count the autoscaler may choose; at least 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the highest replica count the autoscaler may choose; setting it turns
	// autoscaling on.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// Behavior tunes scale-up and scale-down, as in a HorizontalPodAutoscaler.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
	// Metrics adds custom metrics to scale on (Pods metrics only). Use the CPU and memory
	// targets for resource metrics.
	// +optional
	Metrics []MetricSpec `json:"metrics,omitempty"`
	// TargetCPUUtilization is the average CPU utilization, in percent, to keep the pods at;
	// the webhook defaults it to 90.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TargetCPUUtilization *int32 `json:"targetCPUUtilization,omitempty"`
	// TargetMemoryUtilization is the average memory utilization, in percent, to keep the pods at.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TargetMemoryUtilization *int32 `json:"targetMemoryUtilization,omitempty"`
}

// PodDisruptionBudgetSpec configures the PodDisruptionBudget generated for a workload.
type PodDisruptionBudgetSpec struct {
	// MinAvailable is how many (or what percentage of) pods must stay available during a
	// voluntary eviction.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// MaxUnavailable is how many (or what percentage of) pods may be unavailable during a
	// voluntary eviction. It excludes minAvailable.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// PortsSpec is a Service port that the operator also opens on the container, optionally bound to
// a host port.
type PortsSpec struct {
	// HostPort binds the container port to this port on the node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	HostPort int32 `json:"hostPort,omitempty"`

	// ServicePort carries the port's name, protocol, number, target port and app protocol.
	corev1.ServicePort `json:",inline"`
}

// OpenTelemetryCommonFields are the pod, container and service settings shared by the workload
// kinds (collector, target allocator, OpAMP bridge).
type OpenTelemetryCommonFields struct {
	// ManagementState says whether the operator reconciles this resource: managed (default) or
	// unmanaged.
	//
	// +kubebuilder:default:=managed
	ManagementState ManagementStateType `json:"managementState,omitempty"`
	// Resources are the compute resources of the main container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector constrains the pods to nodes with these labels (not used in sidecar mode).
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Args are extra command-line flags of the main container, passed as --key=value sorted by key.
	// +optional
	Args map[string]string `json:"args,omitempty"`
	// Replicas is the number of pods when autoscaling is off.
	// +optional
	// +kubebuilder:default:=1
	Replicas *int32 `json:"replicas,omitempty"`
	// PodDisruptionBudget configures the generated PodDisruptionBudget; without it the operator
	// uses maxUnavailable 1.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`
	// SecurityContext is the security context of the main container (also of the injected
	// container in sidecar mode).
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// PodSecurityContext is the security context of the generated pod; ignored in sidecar mode.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// PodAnnotations are added to the generated pods.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	// ServiceAccount names an existing ServiceAccount for the pods; when set the operator does
	// not create one.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Image is the container image of the main container; empty means the operator's default.
	// +optional
	Image string `json:"image,omitempty"`
	// ImagePullPolicy is the pull policy of the main container.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// VolumeMounts are added to the main container.
	// +optional
	// +listType=atomic
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// Ports are opened on the container and the Service in addition to the ports inferred from
	// the configuration; an entry wins over an inferred port of the same name.
	// +optional
	// +listType=atomic
	Ports []PortsSpec `json:"ports,omitempty"`
	// Env are environment variables of the main container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// EnvFrom are sources of environment variables of the main container.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// Tolerations of the generated pods (not allowed in sidecar mode).
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Volumes are added to the generated pods.
	// +optional
	// +listType=atomic
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// Affinity holds the pods' scheduling constraints (not allowed in sidecar mode).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Lifecycle holds the main container's lifecycle hooks.
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`
	// TerminationGracePeriodSeconds is how long a pod may take to stop.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// TopologySpreadConstraints spread the pods across failure domains (deployment and
	// statefulset modes).
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// HostNetwork runs the pods in the node's network namespace.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// DNSPolicy is the pods' DNS policy.
	// +optional
	DNSPolicy *corev1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// HostPID gives the pods the node's process ID namespace.
	// +optional
	HostPID bool `json:"hostPID,omitempty"`
	// ShareProcessNamespace makes the pod's containers share one process namespace.
	// +optional
	ShareProcessNamespace bool `json:"shareProcessNamespace,omitempty"`
	// PriorityClassName is the pods' priority class (not allowed in sidecar mode).
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// InitContainers are added to the generated pods.
	// +optional
	InitContainers []corev1.Container `json:"initContainers,omitempty"`
	// AdditionalContainers are added next to the main container, which is named otc-container
	// (not allowed in sidecar mode). Overriding the operator's container is unsupported.
	// +optional
	AdditionalContainers []corev1.Container `json:"additionalContainers,omitempty"`
	// PodDNSConfig adds DNS settings to those that the DNS policy produces.
	// +optional
	PodDNSConfig corev1.PodDNSConfig `json:"podDnsConfig,omitempty"`
	// IpFamilies are the IP families of the generated Services.
	// +optional
	IpFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
	// IpFamilyPolicy is the dual-stack policy of the generated Services.
	// +kubebuilder:default:=SingleStack
	// +optional
	IpFamilyPolicy *corev1.IPFamilyPolicy `json:"ipFamilyPolicy,omitempty"`
	// TrafficDistribution is the traffic distribution preference of the generated Services.
	// +optional
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`
	// SessionAffinity is the session affinity of the generated Services.
	// +optional
	SessionAffinity *corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`
	// SessionAffinityConfig tunes the session affinity of the generated Services.
	// +optional
	SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
	// HostUsers set to false runs the pods in their own user namespace.
	// +optional
	HostUsers *bool `json:"hostUsers,omitempty"`
	// HostAliases are added to the pods' hosts file (not with host networking).
	// +optional
	// +listType=atomic
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`
}

// StatefulSetCommonFields are the settings that apply only to statefulset workloads.
type StatefulSetCommonFields struct {
	// VolumeClaimTemplates give each pod its own PersistentVolumeClaims (statefulset mode only).
	// +optional
	// +listType=atomic
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
	// PersistentVolumeClaimRetentionPolicy says what happens to the claims when the StatefulSet
	// is scaled down or deleted (statefulset mode only).
	// +optional
	PersistentVolumeClaimRetentionPolicy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
	// ServiceName is the StatefulSet's governing Service; it defaults to the headless Service
	// "<name>-collector-headless". A custom Service is not created by the operator.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// PodManagementPolicy is OrderedReady or Parallel; the operator uses Parallel when unset.
	// +optional
	// +kubebuilder:validation:Enum=OrderedReady;Parallel
	PodManagementPolicy appsv1.PodManagementPolicyType `json:"podManagementPolicy,omitempty"`
}
