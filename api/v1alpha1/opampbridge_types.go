package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="OpenTelemetry Version"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.endpoint"

// OpAMPBridge runs a bridge that reports the namespace's collectors to an OpAMP server and
// applies the configurations the server sends.
type OpAMPBridge struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired bridge.
	Spec OpAMPBridgeSpec `json:"spec,omitempty"`
	// Status is what the operator last observed.
	Status OpAMPBridgeStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpAMPBridgeList is a list of OpAMPBridge.
type OpAMPBridgeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the bridges.
	Items []OpAMPBridge `json:"items"`
}

// OpAMPBridgeSpec is the desired state of an OpAMPBridge.
type OpAMPBridgeSpec struct {
	// Endpoint is the OpAMP server's URL (ws:// or http:// and their TLS forms).
	// +required
	Endpoint string `json:"endpoint"`
	// TLS configures the connection to the OpAMP server.
	// +optional
	TLS *OpAMPBridgeTLSConfig `json:"tls,omitempty"`
	// Headers are sent to the OpAMP server with every request.
	// +optional
	Headers map[string]string `json:"headers,omitempty"`
	// Capabilities are the OpAMP agent capabilities the bridge announces, each on or off.
	// +required
	Capabilities map[OpAMPBridgeCapability]bool `json:"capabilities"`
	// ComponentsAllowed lists, per component kind (receivers, processors, ...), the component
	// types a remote configuration may use; no restriction when empty.
	// +optional
	ComponentsAllowed map[string][]string `json:"componentsAllowed,omitempty"`
	// Description adds attributes to the agent description the bridge reports.
	// +optional
	Description *AgentDescription `json:"description,omitempty"`
	// Resources are the compute resources of the bridge container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector constrains the bridge pod to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Replicas is the number of bridge pods. Upstream allows at most 1; this operator allows more
	// and turns on the bridge's Lease-based leader election, so that only one replica talks to the
	// OpAMP server at a time.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// SecurityContext is the security context of the bridge container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// PodSecurityContext is the security context of the bridge pod.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// PodAnnotations are added to the bridge pod.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	// ServiceAccount names an existing ServiceAccount for the bridge; when set the operator does
	// not create one.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Image is the bridge image; empty means the operator's default.
	// +optional
	Image string `json:"image,omitempty"`
	// UpgradeStrategy says whether the operator migrates this resource: automatic or none.
	// +optional
	UpgradeStrategy UpgradeStrategy `json:"upgradeStrategy"`
	// ImagePullPolicy is the pull policy of the bridge container.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// VolumeMounts are added to the bridge container.
	// +optional
	// +listType=atomic
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// Ports are opened on the bridge container and Service.
	// +optional
	// +listType=atomic
	Ports []corev1.ServicePort `json:"ports,omitempty"`
	// Env are environment variables of the bridge container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// EnvFrom are sources of environment variables of the bridge container.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// Tolerations of the bridge pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Volumes are added to the bridge pod.
	// +optional
	// +listType=atomic
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// HostNetwork runs the pod in the node's network namespace.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// PriorityClassName is the pod's priority class.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Affinity holds the pod's scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TopologySpreadConstraints spread the pods across failure domains.
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// PodDNSConfig adds DNS settings to those that the DNS policy produces.
	// +optional
	PodDNSConfig corev1.PodDNSConfig `json:"podDnsConfig,omitempty"`
	// IpFamilies are the IP families of the bridge Service.
	// +optional
	IpFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
	// IpFamilyPolicy is the dual-stack policy of the bridge Service.
	// +optional
	IpFamilyPolicy *corev1.IPFamilyPolicy `json:"ipFamilyPolicy,omitempty"`
	// ProxyServer secures the bridge's own OpAMP server, which collectors' opamp extensions
	// connect to (Service port 80, path /v1/opamp). Not in upstream, whose proxy is always plain
	// and unauthenticated.
	// +optional
	ProxyServer *OpAMPBridgeProxyServer `json:"proxyServer,omitempty"`
	// Namespaces limits the collectors the bridge reports on and changes to these namespaces;
	// empty means: report on every namespace the bridge's ServiceAccount can read, change
	// collectors of the bridge's own namespace only. Not in upstream.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
}

// OpAMPBridgeProxyServer secures the bridge's OpAMP server for collectors.
type OpAMPBridgeProxyServer struct {
	// TLSSecretName names a Secret of type kubernetes.io/tls (keys tls.crt and tls.key) in the
	// bridge's namespace; when set the proxy serves only TLS (wss:// and https://).
	// +optional
	TLSSecretName string `json:"tlsSecretName,omitempty"`
	// BearerTokenSecret selects the key of a Secret in the bridge's namespace holding a token;
	// when set, collectors must send "Authorization: Bearer <token>".
	// +optional
	BearerTokenSecret *corev1.SecretKeySelector `json:"bearerTokenSecret,omitempty"`
	// MaxMessageBytes bounds one message from a collector (also once decompressed); the
	// default is 64 MiB.
	// +optional
	// +kubebuilder:validation:Minimum=1024
	MaxMessageBytes *int64 `json:"maxMessageBytes,omitempty"`
}

// OpAMPBridgeStatus is the observed state of an OpAMPBridge.
type OpAMPBridgeStatus struct {
	// Version is the bridge version the operator manages.
	// +optional
	Version string `json:"version,omitempty"`
}

// AgentDescription is extra data for the agent description the bridge reports.
type AgentDescription struct {
	// NonIdentifyingAttributes are reported as non-identifying attributes of the agent.
	NonIdentifyingAttributes map[string]string `json:"non_identifying_attributes" yaml:"non_identifying_attributes"`
}

// OpAMPBridgeTLSConfig configures TLS towards the OpAMP server.
type OpAMPBridgeTLSConfig struct {
	// Insecure turns TLS off.
	// +optional
	Insecure bool `json:"insecure,omitempty" yaml:"insecure,omitempty"`
	// InsecureSkipVerify skips verification of the server's certificate.
	// +optional
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty" yaml:"insecure_skip_verify,omitempty"`
}

// OpAMPBridgeCapability is an OpAMP agent capability the bridge can announce.
//
// +kubebuilder:validation:Enum=AcceptsRemoteConfig;ReportsEffectiveConfig;ReportsOwnTraces;ReportsOwnMetrics;ReportsOwnLogs;AcceptsOpAMPConnectionSettings;AcceptsOtherConnectionSettings;AcceptsRestartCommand;ReportsHealth;ReportsRemoteConfig
type OpAMPBridgeCapability string

// The OpAMP agent capabilities. ReportsStatus is always on and so is not part of the schema enum.
const (
	// OpAMPBridgeCapabilityReportsStatus reports the agent status (always on).
	OpAMPBridgeCapabilityReportsStatus OpAMPBridgeCapability = "ReportsStatus"
	// OpAMPBridgeCapabilityAcceptsRemoteConfig applies configurations sent by the server.
	OpAMPBridgeCapabilityAcceptsRemoteConfig OpAMPBridgeCapability = "AcceptsRemoteConfig"
	// OpAMPBridgeCapabilityReportsEffectiveConfig reports the collectors' configurations.
	OpAMPBridgeCapabilityReportsEffectiveConfig OpAMPBridgeCapability = "ReportsEffectiveConfig"
	// OpAMPBridgeCapabilityReportsOwnTraces reports the bridge's own traces.
	OpAMPBridgeCapabilityReportsOwnTraces OpAMPBridgeCapability = "ReportsOwnTraces"
	// OpAMPBridgeCapabilityReportsOwnMetrics reports the bridge's own metrics.
	OpAMPBridgeCapabilityReportsOwnMetrics OpAMPBridgeCapability = "ReportsOwnMetrics"
	// OpAMPBridgeCapabilityReportsOwnLogs reports the bridge's own logs.
	OpAMPBridgeCapabilityReportsOwnLogs OpAMPBridgeCapability = "ReportsOwnLogs"
	// OpAMPBridgeCapabilityAcceptsOpAMPConnectionSettings accepts new OpAMP connection settings.
	OpAMPBridgeCapabilityAcceptsOpAMPConnectionSettings OpAMPBridgeCapability = "AcceptsOpAMPConnectionSettings"
	// OpAMPBridgeCapabilityAcceptsOtherConnectionSettings accepts other connection settings.
	OpAMPBridgeCapabilityAcceptsOtherConnectionSettings OpAMPBridgeCapability = "AcceptsOtherConnectionSettings"
	// OpAMPBridgeCapabilityAcceptsRestartCommand accepts restart commands.
	OpAMPBridgeCapabilityAcceptsRestartCommand OpAMPBridgeCapability = "AcceptsRestartCommand"
	// OpAMPBridgeCapabilityReportsHealth reports the collectors' health.
	OpAMPBridgeCapabilityReportsHealth OpAMPBridgeCapability = "ReportsHealth"
	// OpAMPBridgeCapabilityReportsRemoteConfig reports the status of remote configurations.
	OpAMPBridgeCapabilityReportsRemoteConfig OpAMPBridgeCapability = "ReportsRemoteConfig"
)
