package opampbridge

import "github.com/otelop/otelop/api/v1alpha1"

// ApplyDefaults sets what upstream's webhook sets: upgradeStrategy automatic, one replica, and the
// ReportsStatus capability on (the protocol requires it; the bridge announces it anyway).
func ApplyDefaults(bridge *v1alpha1.OpAMPBridge) {
	if bridge.Spec.UpgradeStrategy == "" {
		bridge.Spec.UpgradeStrategy = v1alpha1.UpgradeStrategyAutomatic
	}
	if bridge.Spec.Replicas == nil {
		one := int32(1)
		bridge.Spec.Replicas = &one
	}
	if bridge.Spec.Capabilities == nil {
		bridge.Spec.Capabilities = map[v1alpha1.OpAMPBridgeCapability]bool{}
	}
	bridge.Spec.Capabilities[v1alpha1.OpAMPBridgeCapabilityReportsStatus] = true
}
