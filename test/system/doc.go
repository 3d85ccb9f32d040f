// Package system holds the whole-system test of the service provider (`make test-system`): the
// platform, onboarding and control-plane API servers (envtest), the workload cluster as a
// simulated cluster (test/simcluster: pods on kwok's fake nodes become Ready), the provider
// running in-process, the real Flux source-controller and helm-controller as local processes
// (built from their Go modules by hack/build-tools.sh flux), a loopback OCI registry holding this
// repository's chart (charts/opentelemetry-operator, packaged as `make chart` does and pushed with
// the Helm SDK), and our operator binary (bin/opentelemetry-operator) run with the credentials the
// provider made.
//
// It is a module of its own so that Helm's and the registry's dependencies stay out of the
// product's go.mod.
package system
