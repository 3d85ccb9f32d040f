//go:build tools

// Package upstream only pins upstream's module so that its benchmark can be run with
// `go test github.com/open-telemetry/opentelemetry-operator/cmd/otel-allocator -bench ...`.
package upstream

import _ "github.com/open-telemetry/opentelemetry-operator/cmd/otel-allocator"
