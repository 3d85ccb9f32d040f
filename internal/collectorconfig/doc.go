// Package collectorconfig is the OpenTelemetry Collector configuration model used by the operator.
//
// It works on the generic decoded form of spec.config (a map[string]any as produced by decoding JSON),
// whose top-level keys are receivers, exporters, processors, connectors, extensions and service.
// Everything here is a pure function of its input: it never mutates the input map, never talks to a
// cluster, and returns the same output (down to the JSON bytes) for the same input.
//
// The package answers the questions the manifest builders and the webhooks ask about a config:
// which components exist and which are used by the service, which Service ports they listen on,
// which RBAC rules they need, which probes the health_check extension provides, what the
// upstream-compatible defaulted config looks like, whether the config is structurally valid, and how
// the prometheus receiver is rewritten when a target allocator is enabled.
package collectorconfig
