//go:build tools

// Package tools pins Flux's source-controller, which the whole-system test (test/system) runs as a
// local process against the platform API server to pull our chart from a loopback OCI registry.
package tools

import _ "github.com/fluxcd/source-controller"
