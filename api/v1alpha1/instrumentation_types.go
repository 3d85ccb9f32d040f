package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=otelinst;otelinsts
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.exporter.endpoint"
// +kubebuilder:printcolumn:name="Sampler",type="string",JSONPath=".spec.sampler.type"
// +kubebuilder:printcolumn:name="Sampler Arg",type="string",JSONPath=".spec.sampler.argument"
// +kubebuilder:printcolumn:name="Instrumented",type="integer",JSONPath=".status.workloads.instrumented",priority=1,description="Workloads whose running pods carry this instrumentation (otelop)"
// +kubebuilder:printcolumn:name="Pending",type="integer",JSONPath=".status.workloads.pending",description="Workloads that ask for this instrumentation but run pods admitted without it (otelop)"

// Instrumentation configures OpenTelemetry auto-instrumentation, which the operator injects into
// pods annotated with instrumentation.opentelemetry.io/inject-<language>.
type Instrumentation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired instrumentation.
	Spec InstrumentationSpec `json:"spec,omitempty"`
	// Status is what the operator last observed.
	Status InstrumentationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// InstrumentationList is a list of Instrumentation.
type InstrumentationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the instrumentations.
	Items []Instrumentation `json:"items"`
}

// InstrumentationSpec is the desired state of an Instrumentation.
type InstrumentationSpec struct {
	// Exporter says where the instrumented applications send telemetry.
	// +optional
	Exporter Exporter `json:"exporter,omitempty"`
	// Resource configures the resource attributes of the telemetry.
	// +optional
	Resource Resource `json:"resource,omitempty"`
	// Propagators are the context propagators (OTEL_PROPAGATORS).
	// +optional
	Propagators []Propagator `json:"propagators,omitempty"`
	// Sampler configures trace sampling (OTEL_TRACES_SAMPLER and its argument).
	// +optional
	Sampler Sampler `json:"sampler,omitempty"`
	// Defaults changes how default resource attributes are derived.
	// +optional
	Defaults Defaults `json:"defaults,omitempty"`
	// Env are environment variables set on every instrumented container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Java configures Java auto-instrumentation.
	// +optional
	Java Java `json:"java,omitempty"`
	// NodeJS configures Node.js auto-instrumentation.
	// +optional
	NodeJS NodeJS `json:"nodejs,omitempty"`
	// Python configures Python auto-instrumentation.
	// +optional
	Python Python `json:"python,omitempty"`
	// DotNet configures .NET auto-instrumentation.
	// +optional
	DotNet DotNet `json:"dotnet,omitempty"`
	// Go configures Go (eBPF) auto-instrumentation.
	// +optional
	Go Go `json:"go,omitempty"`
	// ApacheHttpd configures Apache HTTPD auto-instrumentation.
	// +optional
	ApacheHttpd ApacheHttpd `json:"apacheHttpd,omitempty"`
	// Nginx configures Nginx auto-instrumentation.
	// +optional
	Nginx Nginx `json:"nginx,omitempty"`
	// ImagePullPolicy is the pull policy of the instrumentation images.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// InitContainerSecurityContext is the security context of the injected init containers.
	// +optional
	InitContainerSecurityContext *corev1.SecurityContext `json:"initContainerSecurityContext,omitempty"`
}

// Resource configures the resource attributes of the telemetry.
type Resource struct {
	// Attributes are added to the resource (OTEL_RESOURCE_ATTRIBUTES).
	// +optional
	Attributes map[string]string `json:"resourceAttributes,omitempty"`
	// AddK8sUIDAttributes adds the k8s.*.uid attributes of the pod's owners.
	// +optional
	AddK8sUIDAttributes bool `json:"addK8sUIDAttributes,omitempty"`
}

// Exporter says where the instrumented applications send telemetry.
type Exporter struct {
	// Endpoint is the OTLP endpoint, for example http://collector:4317.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// TLS configures TLS towards the endpoint.
	// +optional
	TLS *TLS `json:"tls,omitempty"`
}

// TLS configures TLS towards the exporter endpoint. Certificates come from a Secret and/or a
// ConfigMap mounted into the instrumented container; the file fields name keys in them, or
// absolute paths in the container.
type TLS struct {
	// SecretName is a Secret, in the pod's namespace, holding the certificates.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// ConfigMapName is a ConfigMap, in the pod's namespace, holding the CA certificate.
	// +optional
	ConfigMapName string `json:"configMapName,omitempty"`
	// CA is the CA certificate file.
	// +optional
	CA string `json:"ca_file,omitempty"`
	// Cert is the client certificate file.
	// +optional
	Cert string `json:"cert_file,omitempty"`
	// Key is the client key file.
	// +optional
	Key string `json:"key_file,omitempty"`
}

// Sampler configures trace sampling.
type Sampler struct {
	// Type is the sampler (OTEL_TRACES_SAMPLER).
	// +optional
	Type SamplerType `json:"type,omitempty"`
	// Argument is the sampler's argument (OTEL_TRACES_SAMPLER_ARG), for example a ratio
	// between 0 and 1.
	// +optional
	Argument string `json:"argument,omitempty"`
}

// Defaults changes how default resource attributes are derived.
type Defaults struct {
	// UseLabelsForResourceAttributes derives service.name, service.version and
	// service.namespace from the well-known app.kubernetes.io labels.
	// +optional
	UseLabelsForResourceAttributes bool `json:"useLabelsForResourceAttributes,omitempty"`
}

// Java configures Java auto-instrumentation. Unlike the other languages, its resources key is
// `resources`.
type Java struct {
	// Image is the Java agent image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the agent volume an ephemeral PersistentVolumeClaim instead of
	// an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the agent emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on instrumented Java containers.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Resources are the compute resources of the injected init container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Extensions are Java agent extensions copied from images.
	// +optional
	Extensions []Extensions `json:"extensions,omitempty"`
}

// Extensions is a Java agent extension to copy from an image.
type Extensions struct {
	// Image holds the extension.
	Image string `json:"image"`
	// Dir is the directory in the image that holds the extension.
	Dir string `json:"dir"`
}

// NodeJS configures Node.js auto-instrumentation.
type NodeJS struct {
	// Image is the Node.js instrumentation image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the instrumentation volume an ephemeral PersistentVolumeClaim
	// instead of an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the instrumentation emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on instrumented Node.js containers.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Resources are the compute resources of the injected init container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// Python configures Python auto-instrumentation.
type Python struct {
	// Image is the Python instrumentation image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the instrumentation volume an ephemeral PersistentVolumeClaim
	// instead of an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the instrumentation emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on instrumented Python containers.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Resources are the compute resources of the injected init container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// DotNet configures .NET auto-instrumentation.
type DotNet struct {
	// Image is the .NET instrumentation image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the instrumentation volume an ephemeral PersistentVolumeClaim
	// instead of an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the instrumentation emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on instrumented .NET containers.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Resources are the compute resources of the injected init container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// Go configures Go auto-instrumentation, which runs as a privileged eBPF sidecar.
type Go struct {
	// Image is the Go instrumentation image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the instrumentation volume an ephemeral PersistentVolumeClaim
	// instead of an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the instrumentation emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on the Go instrumentation sidecar.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Resources are the compute resources of the injected sidecar.
	// +optional
	Resources corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
	// SecurityContext replaces the sidecar's security context.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// ApacheHttpd configures Apache HTTPD auto-instrumentation.
type ApacheHttpd struct {
	// Image is the Apache HTTPD instrumentation image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the instrumentation volume an ephemeral PersistentVolumeClaim
	// instead of an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the instrumentation emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on instrumented containers.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Attrs are extra settings of the Apache module.
	// +optional
	Attrs []corev1.EnvVar `json:"attrs,omitempty"`
	// Version is the Apache HTTPD version (2.2 or 2.4, the default).
	// +optional
	Version string `json:"version,omitempty"`
	// ConfigPath is the directory of the Apache configuration (default /usr/local/apache2/conf).
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9._/-]*$`
	// +kubebuilder:validation:MaxLength=256
	ConfigPath string `json:"configPath,omitempty"`
	// Resources are the compute resources of the injected init container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// Nginx configures Nginx auto-instrumentation.
type Nginx struct {
	// Image is the Nginx instrumentation image.
	// +optional
	Image string `json:"image,omitempty"`
	// VolumeClaimTemplate makes the instrumentation volume an ephemeral PersistentVolumeClaim
	// instead of an emptyDir.
	// +optional
	VolumeClaimTemplate corev1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
	// VolumeSizeLimit is the size limit of the instrumentation emptyDir volume.
	// +optional
	VolumeSizeLimit *resource.Quantity `json:"volumeLimitSize,omitempty"`
	// Env are environment variables set on instrumented containers.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Attrs are extra settings of the Nginx module.
	// +optional
	Attrs []corev1.EnvVar `json:"attrs,omitempty"`
	// ConfigFile is the Nginx configuration file (default /etc/nginx/nginx.conf).
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9._/-]*$`
	// +kubebuilder:validation:MaxLength=256
	ConfigFile string `json:"configFile,omitempty"`
	// Resources are the compute resources of the injected init container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// InstrumentationStatus is the observed state of an Instrumentation.
type InstrumentationStatus struct {
	// UpgradeBlockedVersions records, per language, an instrumentation version the automatic
	// image upgrade skipped.
	// +optional
	UpgradeBlockedVersions map[string]string `json:"upgradeBlockedVersions,omitempty"`
	// Workloads summarises the Deployments, StatefulSets and DaemonSets that ask for this
	// Instrumentation (through their pod template's or their namespace's inject annotations) and
	// whether their running pods were admitted with it. Written by the catch-up controller; not
	// in upstream's API.
	// +optional
	Workloads *InstrumentationWorkloads `json:"workloads,omitempty"`
}

// InstrumentationWorkloads counts the workloads that ask for an Instrumentation.
type InstrumentationWorkloads struct {
	// Instrumented is how many workloads run only pods that carry this Instrumentation's current
	// generation for every language they ask it for.
	Instrumented int32 `json:"instrumented"`
	// Pending is how many workloads run pods that were admitted without it (created before the
	// Instrumentation existed or while the operator was down) or with an older generation of it.
	// A restart of the workload instruments them.
	Pending int32 `json:"pending"`
	// PendingWorkloads names the first pending workloads, sorted by namespace, kind and name; at
	// most 10 (Pending has the full count).
	// +optional
	// +kubebuilder:validation:MaxItems=10
	PendingWorkloads []PendingWorkload `json:"pendingWorkloads,omitempty"`
}

// PendingWorkload is a workload whose pods miss an Instrumentation.
type PendingWorkload struct {
	// Kind is Deployment, StatefulSet or DaemonSet.
	Kind string `json:"kind"`
	// Namespace is the workload's namespace.
	Namespace string `json:"namespace"`
	// Name is the workload's name.
	Name string `json:"name"`
	// Reason says why: NotInjected (pods admitted without this Instrumentation), Outdated (pods
	// carry an older generation of it), RollingOut (a rollout is replacing them) or
	// RestartDidNotInject (the operator restarted the workload for this generation and its new
	// pods still lack it: look at the pod webhook).
	Reason string `json:"reason"`
}

// Propagator is a context propagation format.
//
// +kubebuilder:validation:Enum=tracecontext;baggage;b3;b3multi;jaeger;xray;ottrace;none
type Propagator string

const (
	// TraceContext is W3C Trace Context.
	TraceContext Propagator = "tracecontext"
	// Baggage is W3C Baggage.
	Baggage Propagator = "baggage"
	// B3 is B3 single-header.
	B3 Propagator = "b3"
	// B3Multi is B3 multi-header.
	B3Multi Propagator = "b3multi"
	// Jaeger is the Jaeger format.
	Jaeger Propagator = "jaeger"
	// XRay is AWS X-Ray.
	XRay Propagator = "xray"
	// OTTrace is OpenTracing.
	OTTrace Propagator = "ottrace"
	// None disables propagation.
	None Propagator = "none"
)

// SamplerType is a trace sampler.
//
// +kubebuilder:validation:Enum=always_on;always_off;traceidratio;parentbased_always_on;parentbased_always_off;parentbased_traceidratio;jaeger_remote;xray
type SamplerType string

const (
	// AlwaysOn samples every trace.
	AlwaysOn SamplerType = "always_on"
	// AlwaysOff samples no trace.
	AlwaysOff SamplerType = "always_off"
	// TraceIDRatio samples a ratio of traces.
	TraceIDRatio SamplerType = "traceidratio"
	// ParentBasedAlwaysOn follows the parent, sampling root spans.
	ParentBasedAlwaysOn SamplerType = "parentbased_always_on"
	// ParentBasedAlwaysOff follows the parent, dropping root spans.
	ParentBasedAlwaysOff SamplerType = "parentbased_always_off"
	// ParentBasedTraceIDRatio follows the parent, sampling a ratio of root spans.
	ParentBasedTraceIDRatio SamplerType = "parentbased_traceidratio"
	// JaegerRemote fetches the sampling strategy from Jaeger.
	JaegerRemote SamplerType = "jaeger_remote"
	// ParentBasedJaegerRemote follows the parent, using Jaeger remote sampling for roots. It is
	// not in the schema enum (as upstream).
	ParentBasedJaegerRemote SamplerType = "parentbased_jaeger_remote"
	// XRaySampler uses AWS X-Ray sampling rules.
	XRaySampler SamplerType = "xray"
)
