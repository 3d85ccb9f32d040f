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
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultChartURL is the opentelemetry-kube-stack chart used when a version names no chartURL.
const DefaultChartURL = "oci://ghcr.io/open-telemetry/opentelemetry-helm-charts/opentelemetry-kube-stack"

// DefaultPollInterval is how often instances are reconciled when pollInterval is not set.
const DefaultPollInterval = time.Minute

// ProviderConfigSpec configures every OtelOperator served by the provider.
type ProviderConfigSpec struct {
	// PollInterval is how often each OtelOperator is reconciled. Defaults to 1m.
	// +kubebuilder:default="1m"
	// +optional
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`
	// CABundleRef names a ConfigMap key in the provider's namespace (POD_NAMESPACE) holding a
	// PEM-encoded CA bundle. It is copied into each workload namespace and mounted into the
	// operator with SSL_CERT_DIR pointing at it.
	// +optional
	CABundleRef *corev1.ConfigMapKeySelector `json:"caBundleRef,omitempty"`
	// Versions are the opentelemetry-kube-stack chart versions users may request.
	// +kubebuilder:validation:MinItems=1
	// +listType=map
	// +listMapKey=version
	// +required
	Versions []VersionConfig `json:"versions"`
}

// VersionConfig is one allowed chart version and how to install it.
// +kubebuilder:validation:XValidation:rule="!(has(self.chartInsecure) && self.chartInsecure && has(self.chartCABundleRef))",message="chartInsecure and chartCABundleRef are mutually exclusive: chartInsecure is for a plain-HTTP registry, chartCABundleRef for an HTTPS registry whose certificate is signed by a private CA",fieldPath=".chartInsecure",reason="FieldValueInvalid"
type VersionConfig struct {
	// Version is the chart version; OtelOperator.spec.version must match it exactly.
	// +kubebuilder:validation:MinLength=1
	// +required
	Version string `json:"version"`
	// ChartURL is the OCI URL of the opentelemetry-kube-stack chart.
	// +kubebuilder:default="oci://ghcr.io/open-telemetry/opentelemetry-helm-charts/opentelemetry-kube-stack"
	// +kubebuilder:validation:Pattern=`^oci://.+`
	// +optional
	ChartURL string `json:"chartURL,omitempty"`
	// ChartPullSecret is a kubernetes.io/dockerconfigjson Secret in the provider's namespace used to
	// pull the chart.
	// +optional
	ChartPullSecret string `json:"chartPullSecret,omitempty"`
	// ChartInsecure lets Flux pull the chart from a registry that speaks plain HTTP, e.g. an
	// in-cluster registry (the OCIRepository's spec.insecure). Flux then also accepts an HTTPS
	// registry without verifying its certificate, so the provider accepts it only when chartURL's
	// host is a loopback address, localhost or an in-cluster Service name (*.svc,
	// *.svc.cluster.local); to trust a private CA instead, use chartCABundleRef. Mutually exclusive
	// with chartCABundleRef.
	// +optional
	ChartInsecure bool `json:"chartInsecure,omitempty"`
	// ChartCABundleRef names a ConfigMap key in the provider's namespace (POD_NAMESPACE) holding
	// the PEM-encoded CA certificate(s) that signed the chart registry's serving certificate; the
	// same shape as spec.caBundleRef, and it may name the same ConfigMap. It is copied into a
	// Secret (key ca.crt) next to the OCIRepository and referenced from its spec.certSecretRef;
	// Flux trusts it in addition to the system CAs. Mutually exclusive with chartInsecure.
	// +optional
	ChartCABundleRef *corev1.ConfigMapKeySelector `json:"chartCABundleRef,omitempty"`
	// HelmValues are raw Helm values for the releases of this version. Its imagePullSecrets
	// (a list of {name}) name Secrets in the provider's namespace that are copied into the
	// workload namespace.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	HelmValues *apiextensionsv1.JSON `json:"helmValues,omitempty"`
}

// ProviderConfigStatus is what the provider observed about its configuration.
type ProviderConfigStatus struct {
	// ObservedGeneration is the generation last read.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions of the configuration.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProviderConfig configures the service provider; its name is the provider's name.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:metadata:labels="openmcp.cloud/cluster=platform"
// +kubebuilder:printcolumn:name="Poll",type=string,JSONPath=`.spec.pollInterval`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the configuration.
	Spec ProviderConfigSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ProviderConfigList is a list of ProviderConfigs.
// +kubebuilder:object:root=true
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ProviderConfigs.
	Items []ProviderConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ProviderConfig{}, &ProviderConfigList{})
}
