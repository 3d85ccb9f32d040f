package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=otelcol;otelcols
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.scale.replicas,selectorpath=.status.scale.selector
// +kubebuilder:printcolumn:name="Mode",type="string",JSONPath=".spec.mode",description="Deployment Mode"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="OpenTelemetry Version"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.scale.statusReplicas"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".status.image"
// +kubebuilder:printcolumn:name="Management",type="string",JSONPath=".spec.managementState",description="Management State"
// +kubebuilder:printcolumn:name="Sidecars Outdated",type="integer",JSONPath=".status.sidecars.outdated",priority=1,description="Workloads that ask for this sidecar collector but run pods without its current generation (otelop)"

// OpenTelemetryCollector runs an OpenTelemetry Collector as a Deployment, DaemonSet, StatefulSet
// or injected sidecar, from a collector configuration.
type OpenTelemetryCollector struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired collector.
	Spec OpenTelemetryCollectorSpec `json:"spec,omitempty"`
	// Status is what the operator last observed.
	Status OpenTelemetryCollectorStatus `json:"status,omitempty"`
}

// Hub marks v1beta1 as the version that other versions of the collector convert through.
func (*OpenTelemetryCollector) Hub() {}

// +kubebuilder:object:root=true

// OpenTelemetryCollectorList is a list of OpenTelemetryCollector.
type OpenTelemetryCollectorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the collectors.
	Items []OpenTelemetryCollector `json:"items"`
}

// OpenTelemetryCollectorStatus is the observed state of an OpenTelemetryCollector.
type OpenTelemetryCollectorStatus struct {
	// Scale backs the scale subresource.
	// +optional
	Scale ScaleSubresourceStatus `json:"scale,omitempty"`
	// Version is the collector version the operator manages (the operator's known version, not
	// the running image's).
	// +optional
	Version string `json:"version,omitempty"`
	// Image is the collector image the operator deployed.
	// +optional
	Image string `json:"image,omitempty"`
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations (Ready, Reconciling, Stalled; see conditions.go).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Sidecars counts, for a collector in sidecar mode, the workloads whose pods ask for it
	// (sidecar.opentelemetry.io/inject) by whether they run its current generation. Written by
	// the operator's catch-up controller; not in upstream's API.
	// +optional
	Sidecars *SidecarWorkloads `json:"sidecars,omitempty"`
}

// SidecarWorkloads is status.sidecars of a sidecar-mode collector.
type SidecarWorkloads struct {
	// Current is how many workloads run only pods whose sidecar carries this collector's
	// current generation.
	Current int32 `json:"current"`
	// Outdated is how many workloads run pods without this sidecar (admitted while the pod
	// webhook was down) or with an older generation of it. A restart of the workload fixes them.
	Outdated int32 `json:"outdated"`
	// OutdatedWorkloads names the first outdated workloads, sorted by namespace, kind and name;
	// at most 10 (Outdated has the full count).
	// +optional
	// +kubebuilder:validation:MaxItems=10
	OutdatedWorkloads []OutdatedWorkload `json:"outdatedWorkloads,omitempty"`
}

// OutdatedWorkload is a workload whose pods miss the current generation of a sidecar collector.
type OutdatedWorkload struct {
	// Kind is Deployment, StatefulSet or DaemonSet.
	Kind string `json:"kind"`
	// Namespace is the workload's namespace.
	Namespace string `json:"namespace"`
	// Name is the workload's name.
	Name string `json:"name"`
	// Reason says why: NotInjected (pods without this sidecar, or injected before the operator
	// recorded generations), Outdated (pods carry an older generation of it), RollingOut (a
	// rollout is replacing them) or RestartDidNotInject (the operator restarted the workload for
	// this generation and its new pods still lack it: look at the pod webhook).
	Reason string `json:"reason"`
}

// +kubebuilder:validation:XValidation:rule="!(self.mode == 'sidecar' && size(self.tolerations) > 0) || !has(self.tolerations)",message="the OpenTelemetry Collector mode is set to sidecar, which does not support the attribute 'tolerations'"
// +kubebuilder:validation:XValidation:rule="!(self.mode == 'sidecar' && self.priorityClassName != '') || !has(self.priorityClassName)",message="the OpenTelemetry Collector mode is set to sidecar, which does not support the attribute 'priorityClassName'"
// +kubebuilder:validation:XValidation:rule="!(self.mode == 'sidecar' && self.affinity != null) || !has(self.affinity)",message="the OpenTelemetry Collector mode is set to sidecar, which does not support the attribute 'affinity'"
// +kubebuilder:validation:XValidation:rule="!(self.mode == 'sidecar' && size(self.additionalContainers) > 0) || !has(self.additionalContainers)",message="the OpenTelemetry Collector mode is set to sidecar, which does not support the attribute 'additionalContainers'"

// OpenTelemetryCollectorSpec is the desired state of an OpenTelemetryCollector.
type OpenTelemetryCollectorSpec struct {
	// OpenTelemetryCommonFields are the pod, container and service settings.
	OpenTelemetryCommonFields `json:",inline"`
	// StatefulSetCommonFields are the statefulset-only settings.
	StatefulSetCommonFields `json:",inline"`
	// Autoscaler turns on a HorizontalPodAutoscaler for the collector.
	// +optional
	Autoscaler *AutoscalerSpec `json:"autoscaler,omitempty"`
	// TargetAllocator configures the Prometheus target allocator that shares scrape targets
	// among the collector pods.
	// +optional
	TargetAllocator TargetAllocatorEmbedded `json:"targetAllocator,omitempty"`
	// Mode is how the collector runs: deployment (the default), daemonset, statefulset or
	// sidecar. It cannot be changed after creation.
	// +optional
	Mode Mode `json:"mode,omitempty"`
	// UpgradeStrategy says whether the operator migrates this resource when it knows a newer
	// collector version: automatic (the default) or none.
	// +optional
	UpgradeStrategy UpgradeStrategy `json:"upgradeStrategy"`
	// Config is the collector configuration. Write empty components as `{}` (for example
	// `batch: {}`) so that kubectl edit and kustomize keep them.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	Config Config `json:"config"`
	// ConfigVersions is how many configuration ConfigMaps to keep besides the current one.
	// +optional
	// +kubebuilder:default:=3
	// +kubebuilder:validation:Minimum:=1
	ConfigVersions int `json:"configVersions,omitempty"`
	// Ingress exposes the collector's receivers through an Ingress or an OpenShift Route
	// (deployment, daemonset and statefulset modes).
	// +optional
	Ingress Ingress `json:"ingress,omitempty"`
	// HttpRoute exposes the collector's receivers through a Gateway API HTTPRoute (deployment,
	// daemonset and statefulset modes).
	// +optional
	HttpRoute HttpRouteConfig `json:"httpRoute,omitempty"`
	// NetworkPolicy configures the NetworkPolicy generated for the collector pods.
	// +optional
	NetworkPolicy NetworkPolicy `json:"networkPolicy,omitempty"`
	// LivenessProbe tunes the liveness probe; its handler comes from the health_check extension,
	// and there is no probe without that extension.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`
	// ReadinessProbe tunes the readiness probe; its handler comes from the health_check
	// extension, and there is no probe without that extension.
	// +optional
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`
	// StartupProbe tunes the startup probe; its handler comes from the health_check extension,
	// and there is no probe without that extension.
	// +optional
	StartupProbe *Probe `json:"startupProbe,omitempty"`
	// Observability configures how the collector's own telemetry is collected.
	// +optional
	// +kubebuilder:validation:Optional
	Observability ObservabilitySpec `json:"observability,omitempty"`
	// ConfigMaps are ConfigMaps of the same namespace mounted into the collector pods, each as a
	// volume named configmap-<name>.
	// +optional
	ConfigMaps []ConfigMapsSpec `json:"configmaps,omitempty"`
	// DaemonSetUpdateStrategy is the DaemonSet's update strategy (daemonset mode only).
	// +optional
	DaemonSetUpdateStrategy appsv1.DaemonSetUpdateStrategy `json:"daemonSetUpdateStrategy,omitempty"`
	// DeploymentUpdateStrategy is the Deployment's update strategy (deployment mode only).
	// +optional
	DeploymentUpdateStrategy appsv1.DeploymentStrategy `json:"deploymentUpdateStrategy,omitempty"`
	// Command replaces the container entrypoint; the image's ENTRYPOINT is used when empty.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	Command []string `json:"command,omitempty"`
}

// TargetAllocatorEmbedded configures the target allocator from within an OpenTelemetryCollector;
// the operator creates a TargetAllocator resource from it.
type TargetAllocatorEmbedded struct {
	// Replicas is the number of target allocator pods; more than 1 only makes sense with the
	// consistent-hashing or per-node strategies.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// NodeSelector constrains the target allocator pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Resources are the compute resources of the target allocator container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// AllocationStrategy is how targets are shared among collectors: least-weighted,
	// consistent-hashing (the default) or per-node. per-node skips targets that have no node.
	// +optional
	// +kubebuilder:default:=consistent-hashing
	AllocationStrategy TargetAllocatorAllocationStrategy `json:"allocationStrategy,omitempty"`
	// FilterStrategy is how targets are filtered before allocation; relabel-config (the
	// default) drops the targets that the relabel configuration drops.
	// +optional
	// +kubebuilder:default:=relabel-config
	FilterStrategy TargetAllocatorFilterStrategy `json:"filterStrategy,omitempty"`
	// ServiceAccount names an existing ServiceAccount for the target allocator; when set the
	// operator does not create one.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Image is the target allocator image; empty means the operator's default.
	// +optional
	Image string `json:"image,omitempty"`
	// Enabled turns the target allocator on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Affinity holds the target allocator pods' scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// PrometheusCR makes the target allocator discover targets from Prometheus Operator
	// resources (ServiceMonitor, PodMonitor, ScrapeConfig, Probe) its ServiceAccount can read.
	// +optional
	PrometheusCR TargetAllocatorPrometheusCR `json:"prometheusCR,omitempty"`
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
	// PodDisruptionBudget configures the target allocator's PodDisruptionBudget; without it the
	// operator uses maxUnavailable 1 for strategies that support several replicas.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`
	// AllowInsecureAuthSecrets lets the target allocator serve scrape credentials over plain
	// HTTP. Enable it only when a service mesh or similar secures the connection.
	// +optional
	AllowInsecureAuthSecrets bool `json:"allowInsecureAuthSecrets,omitempty"`
	// CollectorNotReadyGracePeriod is how long a collector may be not ready before its targets
	// are given to other collectors.
	// +optional
	// +kubebuilder:default:="30s"
	// +kubebuilder:validation:Format:=duration
	CollectorNotReadyGracePeriod *metav1.Duration `json:"collectorNotReadyGracePeriod,omitempty"`
	// CollectorTargetReloadInterval is how often the collectors' Prometheus receivers fetch
	// their targets from the target allocator.
	// +optional
	// +kubebuilder:default:="30s"
	// +kubebuilder:validation:Format:=duration
	CollectorTargetReloadInterval *metav1.Duration `json:"collectorTargetReloadInterval,omitempty"`
	// Mtls secures the connection between the collectors and the target allocator with mutual
	// TLS.
	// +optional
	Mtls *TargetAllocatorMTLS `json:"mtls,omitempty"`
}

// TargetAllocatorMTLS configures mutual TLS between the collectors and the target allocator.
type TargetAllocatorMTLS struct {
	// Enabled turns mutual TLS on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// UseCertManager makes the operator request the certificates from cert-manager (the
	// default).
	// +optional
	// +kubebuilder:default:=true
	UseCertManager *bool `json:"useCertManager,omitempty"`
	// TLS points at certificates the user provides; read only when useCertManager is false.
	// +optional
	TLS *TargetAllocatorTLS `json:"tls,omitempty"`
}

// TargetAllocatorTLS points at user-provided certificates for mutual TLS. They are mounted with
// subPath, so rotated certificates take effect when the pods restart.
type TargetAllocatorTLS struct {
	// CertificateAuthorityCertificate is the CA that verifies the peer; required when
	// useCertManager is false. Set exactly one of secret and configMap.
	// +optional
	CertificateAuthorityCertificate *CAReference `json:"certificateAuthorityCertificate,omitempty"`
	// ServerCertificate is the target allocator's HTTPS server certificate and key.
	// +optional
	ServerCertificate *CertificateReference `json:"serverCertificate,omitempty"`
	// ClientCertificate is the certificate and key the collectors present to the target
	// allocator.
	// +optional
	ClientCertificate *CertificateReference `json:"clientCertificate,omitempty"`
}

// SecretKeySelector selects one key of a Secret in the workload's namespace.
type SecretKeySelector struct {
	// Name is the Secret's name.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key is the key in the Secret; it defaults to tls.crt for a certificate and tls.key for a
	// private key.
	// +optional
	Key string `json:"key,omitempty"`
}

// ConfigMapKeySelector selects one key of a ConfigMap in the workload's namespace.
type ConfigMapKeySelector struct {
	// Name is the ConfigMap's name.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key is the key in the ConfigMap.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:default="ca.crt"
	// +optional
	Key string `json:"key,omitempty"`
}

// CAReference points at a CA certificate in a Secret or a ConfigMap; set exactly one.
type CAReference struct {
	// Secret holds the CA certificate.
	// +optional
	Secret *SecretKeySelector `json:"secret,omitempty"`
	// ConfigMap holds the CA certificate.
	// +optional
	ConfigMap *ConfigMapKeySelector `json:"configMap,omitempty"`
}

// CertificateReference points at a certificate and its private key, which may be in different
// Secrets.
type CertificateReference struct {
	// CertificateSecret holds the certificate (key tls.crt by default).
	// +kubebuilder:validation:Required
	CertificateSecret SecretKeySelector `json:"certificateSecret"`
	// KeySecret holds the private key (key tls.key by default).
	// +kubebuilder:validation:Required
	KeySecret SecretKeySelector `json:"keySecret"`
}

// Probe tunes a container probe whose handler the operator generates.
type Probe struct {
	// InitialDelaySeconds is the wait after container start before the first probe.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`
	// TimeoutSeconds is the probe timeout (Kubernetes' default is 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// PeriodSeconds is the probe interval (Kubernetes' default is 10).
	// +optional
	// +kubebuilder:validation:Minimum=1
	PeriodSeconds *int32 `json:"periodSeconds,omitempty"`
	// SuccessThreshold is how many successes in a row count as success after a failure; it must
	// be 1 for liveness and startup probes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SuccessThreshold *int32 `json:"successThreshold,omitempty"`
	// FailureThreshold is how many failures in a row count as failure (Kubernetes' default is 3).
	// +optional
	// +kubebuilder:validation:Minimum=1
	FailureThreshold *int32 `json:"failureThreshold,omitempty"`
	// TerminationGracePeriodSeconds overrides the pod's grace period when this probe fails.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// ObservabilitySpec configures how an operand's own telemetry is collected.
type ObservabilitySpec struct {
	// Metrics configures the operand's metrics.
	// +optional
	// +kubebuilder:validation:Optional
	Metrics MetricsConfigSpec `json:"metrics,omitempty"`
}

// MetricsConfigSpec configures how an operand's metrics are scraped.
type MetricsConfigSpec struct {
	// EnableMetrics creates a ServiceMonitor (a PodMonitor in sidecar mode) for the operand when
	// the Prometheus Operator CRDs are installed.
	// +optional
	// +kubebuilder:validation:Optional
	EnableMetrics bool `json:"enableMetrics,omitempty"`
	// ExtraLabels are added to the generated ServiceMonitor.
	// +optional
	// +kubebuilder:validation:Optional
	ExtraLabels map[string]string `json:"extraLabels,omitempty"`
	// DisablePrometheusAnnotations stops the operator from adding the prometheus.io/scrape,
	// prometheus.io/port and prometheus.io/path pod annotations.
	// +optional
	// +kubebuilder:validation:Optional
	DisablePrometheusAnnotations bool `json:"disablePrometheusAnnotations,omitempty"`
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

// ConfigMapsSpec names a ConfigMap to mount into the collector pods and where.
type ConfigMapsSpec struct {
	// Name is the ConfigMap's name.
	Name string `json:"name"`
	// MountPath is the directory under /var/conf where it is mounted.
	MountPath string `json:"mountpath"`
}
