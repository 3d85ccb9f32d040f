//go:build tools

// Package tools pins Flux's helm-controller, which the whole-system test (test/system) runs as a
// local process against the platform API server to install our chart into the workload cluster and
// its CRDs into the control plane.
package tools

import _ "github.com/fluxcd/helm-controller"
