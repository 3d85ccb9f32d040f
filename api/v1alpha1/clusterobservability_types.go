package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.exporter.endpoint",description="OTLP exporter endpoint"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Current phase"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// ClusterObservability sets up cluster-wide telemetry collection in one object: the operator
// derives an agent collector (<name>-agent, a DaemonSet), a cluster collector (<name>-cluster, a
// StatefulSet with a target allocator) and an Instrumentation from it. Upstream serves this kind
// only behind the operator.clusterobservability feature gate.
type ClusterObservability struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired cluster observability setup.
	Spec ClusterObservabilitySpec `json:"spec,omitempty"`
	// Status is what the operator last observed.
	Status ClusterObservabilityStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterObservabilityList is a list of ClusterObservability.
type ClusterObservabilityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the cluster observability setups.
	Items []ClusterObservability `json:"items"`
}

// ClusterObservabilitySpec is the desired state of a ClusterObservability.
type ClusterObservabilitySpec struct {
	// Exporter says where all collected telemetry is sent.
	// +required
	Exporter OTLPHTTPExporter `json:"exporter"`
}

// OTLPHTTPExporter is the subset of the collector's otlphttp exporter settings the generated
// collectors use. Field names follow the exporter's own configuration keys.
type OTLPHTTPExporter struct {
	// Endpoint is the base URL; signal paths such as /v1/traces are appended.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// TracesEndpoint overrides the URL for traces.
	// +optional
	TracesEndpoint string `json:"traces_endpoint,omitempty"`
	// MetricsEndpoint overrides the URL for metrics.
	// +optional
	MetricsEndpoint string `json:"metrics_endpoint,omitempty"`
	// LogsEndpoint overrides the URL for logs.
	// +optional
	LogsEndpoint string `json:"logs_endpoint,omitempty"`
	// ProfilesEndpoint overrides the URL for profiles.
	// +optional
	ProfilesEndpoint string `json:"profiles_endpoint,omitempty"`
	// TLS configures the client's TLS.
	// +optional
	TLS *TLSConfig `json:"tls,omitempty"`
	// Timeout is the request timeout, as a duration such as 30s.
	// +optional
	Timeout string `json:"timeout,omitempty"`
	// ReadBufferSize is the HTTP client's read buffer size in bytes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReadBufferSize *int `json:"read_buffer_size,omitempty"`
	// WriteBufferSize is the HTTP client's write buffer size in bytes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	WriteBufferSize *int `json:"write_buffer_size,omitempty"`
	// SendingQueue configures the exporter's queue.
	// +optional
	SendingQueue *SendingQueueConfig `json:"sending_queue,omitempty"`
	// RetryOnFailure configures retries of failed requests.
	// +optional
	RetryOnFailure *RetryConfig `json:"retry_on_failure,omitempty"`
	// Encoding is proto or json.
	// +optional
	// +kubebuilder:validation:Enum=proto;json
	Encoding string `json:"encoding,omitempty"`
	// Compression is gzip or none.
	// +optional
	// +kubebuilder:validation:Enum=gzip;none;""
	Compression string `json:"compression,omitempty"`
	// Headers are sent with every request.
	// +optional
	Headers map[string]string `json:"headers,omitempty"`
}

// TLSConfig configures the otlphttp exporter's TLS client.
type TLSConfig struct {
	// CAFile is the path of the CA certificate.
	// +optional
	CAFile string `json:"ca_file,omitempty"`
	// CertFile is the path of the client certificate.
	// +optional
	CertFile string `json:"cert_file,omitempty"`
	// KeyFile is the path of the client key.
	// +optional
	KeyFile string `json:"key_file,omitempty"`
	// Insecure turns TLS off.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// ServerName overrides the name checked in the server certificate.
	// +optional
	ServerName string `json:"server_name,omitempty"`
}

// SendingQueueConfig configures the exporter's queue.
type SendingQueueConfig struct {
	// Enabled turns the queue on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// NumConsumers is how many consumers drain the queue.
	// +optional
	// +kubebuilder:validation:Minimum=1
	NumConsumers *int `json:"num_consumers,omitempty"`
	// QueueSize is how many batches the queue holds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	QueueSize *int `json:"queue_size,omitempty"`
}

// RetryConfig configures retries of failed export requests. Values are strings as in the
// collector configuration (durations like 5s, factors like 0.5).
type RetryConfig struct {
	// Enabled turns retries on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// InitialInterval is the wait before the first retry.
	// +optional
	InitialInterval string `json:"initial_interval,omitempty"`
	// RandomizationFactor is the jitter applied to the wait.
	// +optional
	RandomizationFactor string `json:"randomization_factor,omitempty"`
	// Multiplier grows the wait after each retry.
	// +optional
	Multiplier string `json:"multiplier,omitempty"`
	// MaxInterval caps the wait.
	// +optional
	MaxInterval string `json:"max_interval,omitempty"`
	// MaxElapsedTime caps the total time spent retrying.
	// +optional
	MaxElapsedTime string `json:"max_elapsed_time,omitempty"`
}

// ClusterObservabilityConditionType is a condition type of a ClusterObservability.
type ClusterObservabilityConditionType string

const (
	// ClusterObservabilityConditionReady is True when the generated resources are ready.
	ClusterObservabilityConditionReady ClusterObservabilityConditionType = "Ready"
	// ClusterObservabilityConditionConfigured is True when the generated resources were applied.
	ClusterObservabilityConditionConfigured ClusterObservabilityConditionType = "Configured"
	// ClusterObservabilityConditionConflicted is True when another ClusterObservability is
	// already active; only one is honoured.
	ClusterObservabilityConditionConflicted ClusterObservabilityConditionType = "Conflicted"
)

// ClusterObservabilityFinalizer lets the operator clean up the generated resources.
const ClusterObservabilityFinalizer = "clusterobservability.opentelemetry.io/finalizer"

// ClusterObservabilityCondition is one observation of a ClusterObservability.
type ClusterObservabilityCondition struct {
	// Type is the condition's type.
	// +required
	Type ClusterObservabilityConditionType `json:"type"`
	// Status is True, False or Unknown.
	// +required
	Status metav1.ConditionStatus `json:"status"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a CamelCase reason for the status.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the status.
	// +optional
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the generation the condition was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ClusterObservabilityStatus is the observed state of a ClusterObservability.
type ClusterObservabilityStatus struct {
	// Conditions are the latest observations.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []ClusterObservabilityCondition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase summarises the state (for example Pending, Ready, Failed).
	// +optional
	Phase string `json:"phase,omitempty"`
	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
	// ComponentsStatus reports each generated component by name.
	// +optional
	ComponentsStatus map[string]ComponentStatus `json:"componentsStatus,omitempty"`
	// ConfigVersions records the configuration version applied to each component.
	// +optional
	ConfigVersions map[string]string `json:"configVersions,omitempty"`
}

// ComponentStatus is the state of one generated component.
type ComponentStatus struct {
	// Ready says whether the component is ready.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// Message explains the state.
	// +optional
	Message string `json:"message,omitempty"`
	// LastUpdated is when this entry last changed.
	// +optional
	LastUpdated metav1.Time `json:"lastUpdated,omitempty"`
}
