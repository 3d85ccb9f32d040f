// Package opampbridge builds the objects the operator generates for an OpAMPBridge: the ConfigMap
// holding the bridge's remoteconfiguration.yaml, the Deployment running the bridge, its
// ServiceAccount and the Service collectors' opamp extensions connect to. Names, labels, ports, the
// container name and the environment are upstream's, so tools written for the upstream operator
// find the same objects.
//
// The builders are pure: every operator-wide input (default image, filters, feature gates, the
// operator's proxy variables) is a field of Options, resolved by the caller.
//
// Unlike upstream, the bridge is told its name (--name=<resource name>) and heartbeat interval, so
// that collectors labelled opentelemetry.io/opamp-managed=<resource name> are managed by it for any
// resource name; and a Deployment with more than one replica runs the bridge with leader election
// (--leader-elect), so that only one replica talks to the OpAMP server.
package opampbridge
