// Package upgrade migrates an OpenTelemetryCollector's spec across collector versions, so that a
// collector last managed at an older version keeps working with the collector this operator runs.
//
// Upstream's operator does this by patching the user's resource from its reconciler. This package
// never does: Apply is a pure function that returns a migrated copy and a list of the changes it
// made, the controller builds the workload from the copy, and the user is told (with an Event) what
// to change in the stored spec. Because the stored spec keeps its old shape, Apply runs on every
// reconcile with the same inputs and gives the same output, so the built objects do not flip back
// and forth; RecordedVersion says which version to keep in status.version so that this holds.
//
// Which of upstream's routines are implemented, and why the others are not, is documented in
// docs/upgrade.md.
package upgrade
