// Package objdiff compares every object that upstream's operator (v0.140.0, built from its Go
// module into bin/tools/upstream-operator) and ours generate for the same custom resources, and
// the resources' own stored form and status. Both operators run against one simulated cluster
// (test/sidebyside): each watches and serves the collector, TargetAllocator and OpAMPBridge
// webhooks of its own namespace (objdiff-upstream, objdiff-otelop), the corpus in
// testdata/corpus.yaml is created in both, and once both sides have converged every generated
// object (paired by kind and name) and every resource is compared field by field. The differences
// found are the table in expected_test.go, which docs/differences.md repeats: a difference that is
// not in the table fails the test, and so does an entry of the table that no longer occurs.
//
// Set OBJDIFF_DUMP to a folder to get both sides of every compared object there, normalized, as
// JSON (<Kind>.<name>.upstream.json, <Kind>.<name>.otelop.json).
package objdiff
