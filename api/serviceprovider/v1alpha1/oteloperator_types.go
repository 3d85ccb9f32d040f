/*
Copyright The otelop Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OtelOperatorSpec is what a control plane's owner asks for.
type OtelOperatorSpec struct {
	// Version is the opentelemetry-kube-stack Helm chart version to install. It must be one of the
	// versions the ProviderConfig allows (spec.versions[].version).
	// +kubebuilder:validation:MinLength=1
	// +required
	Version string `json:"version"`
}

// Phase is the high-level state of an OtelOperator.
// +kubebuilder:validation:Enum=Progressing;Ready;Failed;Terminating
type Phase string

// Phases of an OtelOperator.
const (
	// PhaseProgressing means the provider is working towards Ready.
	PhaseProgressing Phase = "Progressing"
	// PhaseReady means every managed resource is ready.
	PhaseReady Phase = "Ready"
	// PhaseFailed means the provider cannot continue until the input is fixed (see the Ready condition).
	PhaseFailed Phase = "Failed"
	// PhaseTerminating means the OtelOperator is being deleted.
	PhaseTerminating Phase = "Terminating"
)

// ResourcePhase is the state of one managed resource.
// +kubebuilder:validation:Enum=Pending;Progressing;Ready;Failed;Terminating;Unknown
type ResourcePhase string

// Phases of a managed resource.
const (
	// ResourcePending means the resource does not exist yet.
	ResourcePending ResourcePhase = "Pending"
	// ResourceProgressing means the resource exists and is being reconciled.
	ResourceProgressing ResourcePhase = "Progressing"
	// ResourceReady means the resource is ready.
	ResourceReady ResourcePhase = "Ready"
	// ResourceFailed means the resource reports a failure.
	ResourceFailed ResourcePhase = "Failed"
	// ResourceTerminating means the resource is being deleted.
	ResourceTerminating ResourcePhase = "Terminating"
	// ResourceUnknown means the resource's state could not be read.
	ResourceUnknown ResourcePhase = "Unknown"
)

// Location says in which cluster a managed resource lives.
// +kubebuilder:validation:Enum=ControlPlane;PlatformCluster;WorkloadCluster
type Location string

// Locations of managed resources.
const (
	// LocationControlPlane is the tenant's control plane (CP).
	LocationControlPlane Location = "ControlPlane"
	// LocationPlatformCluster is the platform cluster where the provider runs.
	LocationPlatformCluster Location = "PlatformCluster"
	// LocationWorkloadCluster is the workload cluster where the operator runs.
	LocationWorkloadCluster Location = "WorkloadCluster"
)

// ManagedResource is the state of one object the provider manages for an OtelOperator.
type ManagedResource struct {
	// APIGroup of the resource; empty for the core group.
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`
	// Kind of the resource.
	Kind string `json:"kind"`
	// Name of the resource.
	Name string `json:"name"`
	// Namespace of the resource; empty for cluster-scoped resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Phase of the resource.
	Phase ResourcePhase `json:"phase"`
	// Message explains the phase, e.g. a Flux condition message.
	// +optional
	Message string `json:"message,omitempty"`
	// Location is the cluster the resource lives in.
	Location Location `json:"location"`
}

// OtelOperatorStatus is what the provider observed and did.
type OtelOperatorStatus struct {
	// ObservedGeneration is the generation last reconciled successfully.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is Progressing, Ready, Failed or Terminating.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Conditions hold the Ready condition, with a reason and a message.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Resources lists every managed resource and its state.
	// +optional
	Resources []ManagedResource `json:"resources,omitempty"`
}

// OtelOperator requests an OpenTelemetry Operator for the control plane of the same name and
// namespace: CRDs in the control plane, the operator in the workload cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=otelop
// +kubebuilder:metadata:labels="openmcp.cloud/cluster=onboarding"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OtelOperator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec OtelOperatorSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status OtelOperatorStatus `json:"status,omitempty"`
}

// OtelOperatorList is a list of OtelOperators.
// +kubebuilder:object:root=true
type OtelOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the OtelOperators.
	Items []OtelOperator `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OtelOperator{}, &OtelOperatorList{})
}
