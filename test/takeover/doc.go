// Package takeover proves that users switch from upstream's operator (v0.140.0, built from its Go
// module by hack/tools/upstream-operator) to this one without a rollout, and back: on the
// simulated cluster, upstream's operator creates collectors in every mode, then ours takes over
// the same objects, then upstream's takes them back. The test asserts that no pod is restarted and
// no pod template changes, that our operator took every collector over (its status, and every
// object upstream generated: adopt_test.go), and that each operator settles (stops writing) in
// time; it logs every write each operator makes and every field it changes.
//
// Upstream's webhook server listens on all interfaces (it has no host option), so its process runs
// in a network namespace of its own that has only a loopback interface: a forwarder in that
// namespace (this test binary, re-executed) carries the API server connections and the webhook
// calls through Unix sockets. Nothing listens on anything but loopback.
package takeover
