package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".status.image"
// +kubebuilder:printcolumn:name="Management",type="string",JSONPath=".spec.managementState",description="Management State"

// TargetAllocator runs a Prometheus target allocator that shares scrape targets among the pods
// of a collector. A collector uses it when it owns it or carries the label
// opentelemetry.io/target-allocator=<name>.
type TargetAllocator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired target allocator.
	Spec TargetAllocatorSpec `json:"spec,omitempty"`
	// Status is what the operator last observed.
	Status TargetAllocatorStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TargetAllocatorList is a list of TargetAllocator.
type TargetAllocatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the target allocators.
	Items []TargetAllocator `json:"items"`
}

// TargetAllocatorStatus is the observed state of a TargetAllocator.
type TargetAllocatorStatus struct {
	// Version is the target allocator version the operator manages.
	// +optional
	Version string `json:"version,omitempty"`
	// Image is the target allocator image the operator deployed.
	// +optional
	Image string `json:"image,omitempty"`
}

// TargetAllocatorSpec is the desired state of a TargetAllocator.
type TargetAllocatorSpec struct {
	// OpenTelemetryCommonFields are the pod, container and service settings.
	v1beta1.OpenTelemetryCommonFields `json:",inline"`
	// AllocationStrategy is least-weighted, consistent-hashing (the default) or per-node.
	// +optional
	// +kubebuilder:default:=consistent-hashing
	AllocationStrategy v1beta1.TargetAllocatorAllocationStrategy `json:"allocationStrategy,omitempty"`
	// FilterStrategy is how targets are filtered before allocation (relabel-config).
	// +optional
	// +kubebuilder:default:=relabel-config
	FilterStrategy v1beta1.TargetAllocatorFilterStrategy `json:"filterStrategy,omitempty"`
	// GlobalConfig is the global section of the Prometheus configuration.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	GlobalConfig v1beta1.AnyConfig `json:"global,omitempty,omitzero"`
	// ScrapeConfigs are Prometheus scrape configurations.
	// +optional
	// +listType=atomic
	// +kubebuilder:pruning:PreserveUnknownFields
	ScrapeConfigs []v1beta1.AnyConfig `json:"scrapeConfigs,omitempty"`
	// PrometheusCR makes the target allocator discover targets from Prometheus Operator
	// resources.
	// +optional
	PrometheusCR v1beta1.TargetAllocatorPrometheusCR `json:"prometheusCR,omitempty"`
	// Observability configures how the target allocator's own telemetry is collected.
	// +optional
	// +kubebuilder:validation:Optional
	Observability v1beta1.ObservabilitySpec `json:"observability,omitempty"`
	// NetworkPolicy configures the NetworkPolicy generated for the target allocator.
	// +optional
	NetworkPolicy v1beta1.NetworkPolicy `json:"networkPolicy,omitempty"`
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
	// Mtls secures the connection between the collectors and the target allocator.
	// +optional
	Mtls *v1beta1.TargetAllocatorMTLS `json:"mtls,omitempty"`
	// LivenessProbe replaces the target allocator container's liveness probe.
	// +optional
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`
	// ReadinessProbe replaces the target allocator container's readiness probe.
	// +optional
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`
}
