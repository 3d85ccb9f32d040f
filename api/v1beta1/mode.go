package v1beta1

// Mode is how the collector is deployed.
//
// +kubebuilder:validation:Enum=daemonset;deployment;sidecar;statefulset
type Mode string

const (
	// ModeDaemonSet runs one collector pod per node.
	ModeDaemonSet Mode = "daemonset"
	// ModeDeployment runs the collector as a Deployment (the default).
	ModeDeployment Mode = "deployment"
	// ModeSidecar injects the collector into annotated pods.
	ModeSidecar Mode = "sidecar"
	// ModeStatefulSet runs the collector as a StatefulSet.
	ModeStatefulSet Mode = "statefulset"
)

// UpgradeStrategy says whether the operator migrates a resource to newer collector versions.
//
// +kubebuilder:validation:Enum=automatic;none
type UpgradeStrategy string

const (
	// UpgradeStrategyAutomatic lets the operator migrate the resource (the default).
	UpgradeStrategyAutomatic UpgradeStrategy = "automatic"
	// UpgradeStrategyNone leaves the resource as it is.
	UpgradeStrategyNone UpgradeStrategy = "none"
)
