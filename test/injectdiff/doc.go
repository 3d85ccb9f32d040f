// Package injectdiff compares the pods that upstream's pod webhook (operator v0.140.0, built
// from its Go module into bin/tools/upstream-operator) and ours produce for the same pods and the
// same Instrumentations. Both operators run against one simulated cluster with this project's
// CRDs; each serves its pod and Instrumentation webhooks for its own namespaces only (the webhook
// configurations carry a namespaceSelector), every language and annotation form is sent through
// both, and the two admitted pods are compared field by field. The differences found are the
// table in expected_test.go, which docs/differences.md repeats: a difference that is not in the
// table fails the test, and so does an entry of the table that no longer occurs.
//
// Set INJECTDIFF_DUMP to a folder to get both admitted pods of every case there, normalized, as
// JSON (<case>.upstream.json, <case>.otelop.json).
//
// Upstream's webhook server listens on all interfaces, so its process runs in a network namespace
// of its own with only a loopback interface (as in test/takeover): this test binary, re-executed
// there, forwards its API server connections and the webhook calls over Unix sockets. Nothing
// listens on anything but loopback.
package injectdiff
