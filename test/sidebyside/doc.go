// Package sidebyside runs upstream's operator (v0.140.0, built from its Go module into
// bin/tools/upstream-operator) and ours on one simulated cluster, each serving the webhooks of its
// own namespaces, and compares what the two produce: the machinery the differential tests
// (test/injectdiff for the pod webhook, test/objdiff for generated objects) share.
//
// Start brings the two operators up: upstream's in a network namespace of its own (its webhook
// server listens on all interfaces; test/upstreamop forwards its API server connections and
// webhook calls over Unix sockets), with WATCH_NAMESPACE set to its side's namespaces, and ours in
// this process with WatchNamespaces set to the other side's. Each side's webhook configurations
// carry a namespaceSelector on the label SideLabel. Nothing listens on anything but loopback.
//
// Normalize, Diff and Check compare two objects field by field against a table of expected
// differences that fails both ways: a difference the table does not list, and a listed difference
// that no longer occurs.
package sidebyside
