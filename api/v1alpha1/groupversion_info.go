// Package v1alpha1 holds the v1alpha1 version of the opentelemetry.io API group:
// OpenTelemetryCollector (served, deprecated, converted through v1beta1), Instrumentation,
// OpAMPBridge, TargetAllocator and ClusterObservability.
//
// +kubebuilder:object:generate=true
// +groupName=opentelemetry.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "opentelemetry.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's kinds to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&OpenTelemetryCollector{},
		&OpenTelemetryCollectorList{},
		&Instrumentation{},
		&InstrumentationList{},
		&OpAMPBridge{},
		&OpAMPBridgeList{},
		&TargetAllocator{},
		&TargetAllocatorList{},
		&ClusterObservability{},
		&ClusterObservabilityList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
