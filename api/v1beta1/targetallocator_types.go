package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TargetAllocatorPrometheusCR configures how the target allocator reads Prometheus Operator
// resources.
type TargetAllocatorPrometheusCR struct {
	// Enabled makes the target allocator discover targets from Prometheus Operator resources.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// AllowNamespaces limits discovery to these namespaces; it excludes denyNamespaces.
	// +optional
	AllowNamespaces []string `json:"allowNamespaces,omitempty"`
	// DenyNamespaces excludes these namespaces from discovery; it excludes allowNamespaces.
	// +optional
	DenyNamespaces []string `json:"denyNamespaces,omitempty"`
	// SecretNamespaces are the namespaces whose Secrets the target allocator watches; its own
	// namespace when empty.
	// +optional
	SecretNamespaces []string `json:"secretNamespaces,omitempty"`
	// DenyFSAccessThroughSMs drops ServiceMonitor and PodMonitor endpoints that read files from
	// the collector's file system (bearerTokenFile and the TLS file fields), so that tenants
	// cannot read the collector's credentials.
	// +optional
	DenyFSAccessThroughSMs bool `json:"denyFSAccessThroughSMs,omitempty"`
	// ScrapeInterval is the scrape interval for monitors that do not set their own.
	// +optional
	// +kubebuilder:default:="30s"
	// +kubebuilder:validation:Format:=duration
	ScrapeInterval *metav1.Duration `json:"scrapeInterval,omitempty"`
	// EvaluationInterval is the rule evaluation interval.
	// +optional
	// +kubebuilder:default:="30s"
	// +kubebuilder:validation:Format:=duration
	EvaluationInterval *metav1.Duration `json:"evaluationInterval,omitempty"`
	// ScrapeProtocols are the scrape protocols to negotiate, most preferred first.
	// +optional
	ScrapeProtocols []string `json:"scrapeProtocols,omitempty"`
	// ScrapeClasses are Prometheus Operator ScrapeClass objects that monitors may refer to.
	// +optional
	// +listType=atomic
	// +kubebuilder:pruning:PreserveUnknownFields
	ScrapeClasses []AnyConfig `json:"scrapeClasses,omitempty"`
	// PodMonitorSelector selects PodMonitors; null selects none and empty selects all.
	// +optional
	PodMonitorSelector *metav1.LabelSelector `json:"podMonitorSelector,omitempty"`
	// PodMonitorNamespaceSelector selects the namespaces to read PodMonitors from; empty selects
	// all.
	// +optional
	// +kubebuilder:default:={}
	PodMonitorNamespaceSelector *metav1.LabelSelector `json:"podMonitorNamespaceSelector,omitempty"`
	// ServiceMonitorSelector selects ServiceMonitors; null selects none and empty selects all.
	// +optional
	ServiceMonitorSelector *metav1.LabelSelector `json:"serviceMonitorSelector,omitempty"`
	// ServiceMonitorNamespaceSelector selects the namespaces to read ServiceMonitors from; empty
	// selects all.
	// +optional
	// +kubebuilder:default:={}
	ServiceMonitorNamespaceSelector *metav1.LabelSelector `json:"serviceMonitorNamespaceSelector,omitempty"`
	// ScrapeConfigSelector selects ScrapeConfigs; null selects none and empty selects all.
	// +optional
	ScrapeConfigSelector *metav1.LabelSelector `json:"scrapeConfigSelector,omitempty"`
	// ScrapeConfigNamespaceSelector selects the namespaces to read ScrapeConfigs from; empty
	// selects all.
	// +optional
	// +kubebuilder:default:={}
	ScrapeConfigNamespaceSelector *metav1.LabelSelector `json:"scrapeConfigNamespaceSelector,omitempty"`
	// ProbeSelector selects Probes; null selects none and empty selects all.
	// +optional
	ProbeSelector *metav1.LabelSelector `json:"probeSelector,omitempty"`
	// ProbeNamespaceSelector selects the namespaces to read Probes from; empty selects all.
	// +optional
	// +kubebuilder:default:={}
	ProbeNamespaceSelector *metav1.LabelSelector `json:"probeNamespaceSelector,omitempty"`
}

// TargetAllocatorAllocationStrategy is how the target allocator shares targets among collectors.
//
// +kubebuilder:validation:Enum=least-weighted;consistent-hashing;per-node
type TargetAllocatorAllocationStrategy string

// TargetAllocatorFilterStrategy is how the target allocator filters targets before allocation.
//
// +kubebuilder:validation:Enum="";relabel-config
type TargetAllocatorFilterStrategy string

const (
	// TargetAllocatorAllocationStrategyLeastWeighted gives each target to the collector with the
	// fewest targets.
	TargetAllocatorAllocationStrategyLeastWeighted TargetAllocatorAllocationStrategy = "least-weighted"
	// TargetAllocatorAllocationStrategyConsistentHashing gives each target to a collector by a
	// consistent hash of the target (the default).
	TargetAllocatorAllocationStrategyConsistentHashing TargetAllocatorAllocationStrategy = "consistent-hashing"
	// TargetAllocatorAllocationStrategyPerNode gives each target to the collector on the
	// target's node (daemonset collectors).
	TargetAllocatorAllocationStrategyPerNode TargetAllocatorAllocationStrategy = "per-node"
	// TargetAllocatorFilterStrategyRelabelConfig drops the targets that the relabel
	// configuration drops.
	TargetAllocatorFilterStrategyRelabelConfig TargetAllocatorFilterStrategy = "relabel-config"
)
