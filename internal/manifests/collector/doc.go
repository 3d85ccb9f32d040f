// Package collector builds the Kubernetes objects the operator manages for one
// OpenTelemetryCollector, exactly as the upstream OpenTelemetry Operator names and labels them.
//
// Everything here is a pure function of the custom resource and an Options value: no client, no
// logger, no globals. The controller applies the result with server-side apply, the webhooks call
// Validate, and `opentelemetry-operator render` prints the result without a cluster.
package collector
