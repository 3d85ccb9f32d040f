package v1alpha1

import "k8s.io/apimachinery/pkg/util/validation"

// OpAMPBridgeUnstartableCapabilities are protocol capabilities the bridge cannot announce, with why:
// opamp-go's client refuses to start with them (the bridge has no package manager and no list of
// available components), so a bridge configured with one of them on would crash-loop. The
// webhook and the bridge's configuration loader both refuse them.
var OpAMPBridgeUnstartableCapabilities = map[string]string{
	"AcceptsPackages":            "the bridge installs no packages (opamp-go refuses to start without a package state provider)",
	"ReportsPackageStatuses":     "the bridge installs no packages (opamp-go refuses to start without a package state provider)",
	"ReportsAvailableComponents": "the bridge has no list of available components (opamp-go refuses to start without one)",
}

// ValidateOpAMPBridgeName checks a bridge name (--name, the OpAMPBridge resource's name): a DNS subdomain,
// so dots are allowed, that is also usable as the value of the opentelemetry.io/opamp-managed
// label (at most 63 characters), and so also as the prefix of its identity ConfigMap and Lease
// names.
func ValidateOpAMPBridgeName(name string) []string {
	msgs := validation.IsDNS1123Subdomain(name)
	return append(msgs, validation.IsValidLabelValue(name)...)
}
