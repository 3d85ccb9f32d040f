package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/api/v1beta1"
)

// +kubebuilder:deprecatedversion:warning="OpenTelemetryCollector v1alpha1 is deprecated. Migrate to v1beta1."
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=otelcol;otelcols
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.scale.replicas,selectorpath=.status.scale.selector
// +kubebuilder:printcolumn:name="Mode",type="string",JSONPath=".spec.mode",description="Deployment Mode"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="OpenTelemetry Version"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.scale.statusReplicas"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".status.image"
// +kubebuilder:printcolumn:name="Management",type="string",JSONPath=".spec.managementState",description="Management State"

// OpenTelemetryCollector is the deprecated v1alpha1 form of the collector, whose configuration is
// a YAML string. It is stored as v1beta1; use v1beta1 for new manifests.
type OpenTelemetryCollector struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired collector.
	Spec OpenTelemetryCollectorSpec `json:"spec,omitempty"`
	// Status is what the operator last observed.
	Status OpenTelemetryCollectorStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpenTelemetryCollectorList is a list of OpenTelemetryCollector.
type OpenTelemetryCollectorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the collectors.
	Items []OpenTelemetryCollector `json:"items"`
}

// OpenTelemetryCollectorSpec is the desired state of a v1alpha1 OpenTelemetryCollector.
type OpenTelemetryCollectorSpec struct {
	// ManagementState says whether the operator reconciles this resource.
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:default:=managed
	ManagementState ManagementStateType `json:"managementState,omitempty"`
	// Resources are the compute resources of the collector container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector constrains the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Args are extra command-line flags of the collector, passed as --key=value.
	// +optional
	Args map[string]string `json:"args,omitempty"`
	// Replicas is the number of pods when autoscaling is off.
	// +optional
	// +kubebuilder:default:=1
	Replicas *int32 `json:"replicas,omitempty"`
	// MinReplicas is deprecated; use autoscaler.minReplicas.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is deprecated; use autoscaler.maxReplicas.
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// Autoscaler turns on a HorizontalPodAutoscaler for the collector.
	// +optional
	Autoscaler *AutoscalerSpec `json:"autoscaler,omitempty"`
	// PodDisruptionBudget configures the generated PodDisruptionBudget.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`
	// SecurityContext is the security context of the collector container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// PodSecurityContext is the security context of the collector pods.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// PodAnnotations are added to the collector pods.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	// TargetAllocator configures the Prometheus target allocator.
	// +optional
	TargetAllocator OpenTelemetryTargetAllocator `json:"targetAllocator,omitempty"`
	// Mode is how the collector runs: deployment, daemonset, statefulset or sidecar.
	// +optional
	Mode Mode `json:"mode,omitempty"`
	// ServiceAccount names an existing ServiceAccount for the pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Image is the collector image; empty means the operator's default.
	// +optional
	Image string `json:"image,omitempty"`
	// UpgradeStrategy says whether the operator migrates this resource: automatic or none.
	// +optional
	UpgradeStrategy UpgradeStrategy `json:"upgradeStrategy"`
	// ImagePullPolicy is the pull policy of the collector container.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// Config is the collector configuration as a YAML document.
	// +required
	Config string `json:"config,omitempty"`
	// VolumeMounts are added to the collector container.
	// +optional
	// +listType=atomic
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// Ports are opened in addition to the ports inferred from the configuration.
	// +optional
	// +listType=atomic
	Ports []PortsSpec `json:"ports,omitempty"`
	// Env are environment variables of the collector container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// EnvFrom are sources of environment variables of the collector container.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// VolumeClaimTemplates give each pod its own claims (statefulset mode only).
	// +optional
	// +listType=atomic
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
	// Tolerations of the collector pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Volumes are added to the collector pods.
	// +optional
	// +listType=atomic
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// Ingress exposes the collector's receivers outside the cluster.
	// +optional
	Ingress Ingress `json:"ingress,omitempty"`
	// HostNetwork runs the pods in the node's network namespace.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// ShareProcessNamespace makes the pod's containers share one process namespace.
	// +optional
	ShareProcessNamespace bool `json:"shareProcessNamespace,omitempty"`
	// PriorityClassName is the pods' priority class.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Affinity holds the pods' scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Lifecycle holds the collector container's lifecycle hooks.
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`
	// TerminationGracePeriodSeconds is how long a pod may take to stop.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// LivenessProbe tunes the liveness probe generated from the health_check extension.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`
	// InitContainers are added to the collector pods.
	// +optional
	InitContainers []corev1.Container `json:"initContainers,omitempty"`
	// ServiceName is the StatefulSet's governing Service (statefulset mode only).
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// TrafficDistribution is the traffic distribution preference of the generated Services.
	// +optional
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`
	// AdditionalContainers are added next to the collector container.
	// +optional
	AdditionalContainers []corev1.Container `json:"additionalContainers,omitempty"`
	// Observability configures how the collector's own telemetry is collected.
	// +optional
	// +kubebuilder:validation:Optional
	Observability ObservabilitySpec `json:"observability,omitempty"`
	// TopologySpreadConstraints spread the pods across failure domains.
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// ConfigMaps are ConfigMaps of the same namespace mounted into the collector pods.
	// +optional
	ConfigMaps []ConfigMapsSpec `json:"configmaps,omitempty"`
	// UpdateStrategy is the DaemonSet's update strategy (daemonset mode only).
	// +optional
	UpdateStrategy appsv1.DaemonSetUpdateStrategy `json:"updateStrategy,omitempty"`
	// DeploymentUpdateStrategy is the Deployment's update strategy (deployment mode only).
	// +optional
	DeploymentUpdateStrategy appsv1.DeploymentStrategy `json:"deploymentUpdateStrategy,omitempty"`
}

// Ingress configures how the collector's receivers are exposed outside the cluster.
type Ingress struct {
	// Type is ingress or route.
	// +optional
	Type IngressType `json:"type,omitempty"`
	// RuleType is path or subdomain.
	// +optional
	RuleType IngressRuleType `json:"ruleType,omitempty"`
	// Hostname is the host to expose the receivers on.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Annotations are added to the generated Ingress or Routes.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// TLS is the Ingress's TLS configuration.
	// +optional
	TLS []networkingv1.IngressTLS `json:"tls,omitempty"`
	// IngressClassName is the Ingress's class.
	// +optional
	IngressClassName *string `json:"ingressClassName,omitempty"`
	// Route configures OpenShift Routes.
	// +optional
	Route OpenShiftRoute `json:"route,omitempty"`
}

// OpenShiftRoute configures the generated OpenShift Routes.
type OpenShiftRoute struct {
	// Termination is the Routes' TLS termination.
	// +optional
	Termination TLSRouteTerminationType `json:"termination,omitempty"`
}

// PortsSpec is a Service port that is also opened on the container, optionally on a host port.
type PortsSpec struct {
	// HostPort binds the container port to this port on the node.
	// +optional
	HostPort int32 `json:"hostPort,omitempty"`

	// ServicePort carries the port's name, protocol, number, target port and app protocol.
	corev1.ServicePort `json:",inline"`
}

// OpenTelemetryTargetAllocator configures the target allocator of a v1alpha1 collector.
type OpenTelemetryTargetAllocator struct {
	// Replicas is the number of target allocator pods.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// NodeSelector constrains the target allocator pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Resources are the compute resources of the target allocator container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// AllocationStrategy is least-weighted, consistent-hashing (the default) or per-node.
	// +optional
	// +kubebuilder:default:=consistent-hashing
	AllocationStrategy OpenTelemetryTargetAllocatorAllocationStrategy `json:"allocationStrategy,omitempty"`
	// FilterStrategy is how targets are filtered before allocation (relabel-config).
	// +optional
	// +kubebuilder:default:=relabel-config
	FilterStrategy string `json:"filterStrategy,omitempty"`
	// ServiceAccount names an existing ServiceAccount for the target allocator.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Image is the target allocator image.
	// +optional
	Image string `json:"image,omitempty"`
	// Enabled turns the target allocator on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Affinity holds the target allocator pods' scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// PrometheusCR makes the target allocator discover targets from Prometheus Operator
	// resources.
	// +optional
	PrometheusCR OpenTelemetryTargetAllocatorPrometheusCR `json:"prometheusCR,omitempty"`
	// SecurityContext is the security context of the target allocator container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// PodSecurityContext is the security context of the target allocator pods.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// TopologySpreadConstraints spread the target allocator pods across failure domains.
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// Tolerations of the target allocator pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Env are environment variables of the target allocator container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Observability configures how the target allocator's own telemetry is collected.
	// +optional
	// +kubebuilder:validation:Optional
	Observability ObservabilitySpec `json:"observability,omitempty"`
	// PodDisruptionBudget configures the target allocator's PodDisruptionBudget.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`
}

// OpenTelemetryTargetAllocatorPrometheusCR configures how the target allocator reads
// Prometheus Operator resources (v1alpha1 form, with map selectors).
type OpenTelemetryTargetAllocatorPrometheusCR struct {
	// Enabled makes the target allocator discover targets from Prometheus Operator resources.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// ScrapeInterval is the scrape interval for monitors that do not set their own.
	// +optional
	// +kubebuilder:default:="30s"
	// +kubebuilder:validation:Format:=duration
	ScrapeInterval *metav1.Duration `json:"scrapeInterval,omitempty"`
	// ScrapeClasses are Prometheus Operator ScrapeClass objects that monitors may refer to.
	// +optional
	// +listType=atomic
	// +kubebuilder:pruning:PreserveUnknownFields
	ScrapeClasses []v1beta1.AnyConfig `json:"scrapeClasses,omitempty"`
	// PodMonitorSelector selects PodMonitors by these labels; empty selects all.
	// +optional
	PodMonitorSelector map[string]string `json:"podMonitorSelector,omitempty"`
	// ServiceMonitorSelector selects ServiceMonitors by these labels; empty selects all.
	// +optional
	ServiceMonitorSelector map[string]string `json:"serviceMonitorSelector,omitempty"`
	// DenyFSAccessThroughSMs drops monitor endpoints that read files from the collector's file
	// system.
	// +optional
	DenyFSAccessThroughSMs bool `json:"denyFSAccessThroughSMs,omitempty"`
}

// ScaleSubresourceStatus is the part of the status that backs the scale subresource.
type ScaleSubresourceStatus struct {
	// Selector is the label selector, in string form, of the collector pods.
	// +optional
	Selector string `json:"selector,omitempty"`
	// Replicas is the number of non-terminated collector pods.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// StatusReplicas is "<ready>/<total>" for the collector pods.
	// +optional
	StatusReplicas string `json:"statusReplicas,omitempty"`
}

// OpenTelemetryCollectorStatus is the observed state of a v1alpha1 OpenTelemetryCollector.
type OpenTelemetryCollectorStatus struct {
	// Scale backs the scale subresource.
	// +optional
	Scale ScaleSubresourceStatus `json:"scale,omitempty"`
	// Version is the collector version the operator manages.
	// +optional
	Version string `json:"version,omitempty"`
	// Image is the collector image the operator deployed.
	// +optional
	Image string `json:"image,omitempty"`
	// Messages is deprecated and no longer set.
	// +optional
	// +listType=atomic
	Messages []string `json:"messages,omitempty"`
	// Replicas is deprecated; use scale.replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// AutoscalerSpec configures the HorizontalPodAutoscaler generated for the collector.
type AutoscalerSpec struct {
	// MinReplicas is the lowest replica count the autoscaler may choose.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the highest replica count the autoscaler may choose.
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// Behavior tunes scale-up and scale-down.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
	// Metrics adds Pods metrics to scale on.
	// +optional
	Metrics []MetricSpec `json:"metrics,omitempty"`
	// TargetCPUUtilization is the average CPU utilization, in percent, to keep the pods at.
	// +optional
	TargetCPUUtilization *int32 `json:"targetCPUUtilization,omitempty"`
	// TargetMemoryUtilization is the average memory utilization, in percent, to keep the pods at.
	// +optional
	TargetMemoryUtilization *int32 `json:"targetMemoryUtilization,omitempty"`
}

// PodDisruptionBudgetSpec configures the generated PodDisruptionBudget.
type PodDisruptionBudgetSpec struct {
	// MinAvailable is how many pods must stay available during a voluntary eviction.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// MaxUnavailable is how many pods may be unavailable during a voluntary eviction.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// MetricsConfigSpec configures how the collector's metrics are scraped.
type MetricsConfigSpec struct {
	// EnableMetrics creates a ServiceMonitor (a PodMonitor in sidecar mode) for the collector.
	// +optional
	// +kubebuilder:validation:Optional
	EnableMetrics bool `json:"enableMetrics,omitempty"`
	// DisablePrometheusAnnotations stops the operator from adding prometheus.io pod
	// annotations. The capitalised JSON name is upstream's and kept for compatibility.
	// +optional
	// +kubebuilder:validation:Optional
	DisablePrometheusAnnotations bool `json:"DisablePrometheusAnnotations,omitempty"`
}

// ObservabilitySpec configures how the collector's own telemetry is collected.
type ObservabilitySpec struct {
	// Metrics configures the collector's metrics.
	// +optional
	// +kubebuilder:validation:Optional
	Metrics MetricsConfigSpec `json:"metrics,omitempty"`
}

// Probe tunes a container probe whose handler the operator generates.
type Probe struct {
	// InitialDelaySeconds is the wait after container start before the first probe.
	// +optional
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`
	// TimeoutSeconds is the probe timeout.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// PeriodSeconds is the probe interval.
	// +optional
	PeriodSeconds *int32 `json:"periodSeconds,omitempty"`
	// SuccessThreshold is how many successes in a row count as success after a failure.
	// +optional
	SuccessThreshold *int32 `json:"successThreshold,omitempty"`
	// FailureThreshold is how many failures in a row count as failure.
	// +optional
	FailureThreshold *int32 `json:"failureThreshold,omitempty"`
	// TerminationGracePeriodSeconds overrides the pod's grace period when this probe fails.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// MetricSpec is one entry of the autoscaler's metrics list (Pods metrics only).
type MetricSpec struct {
	// Type is the kind of metric source; only "Pods" is supported.
	Type autoscalingv2.MetricSourceType `json:"type"`
	// Pods describes a metric averaged over the collector pods.
	// +optional
	Pods *autoscalingv2.PodsMetricSource `json:"pods,omitempty"`
}

// ConfigMapsSpec names a ConfigMap to mount into the collector pods and where.
type ConfigMapsSpec struct {
	// Name is the ConfigMap's name.
	Name string `json:"name"`
	// MountPath is where it is mounted.
	MountPath string `json:"mountpath"`
}
