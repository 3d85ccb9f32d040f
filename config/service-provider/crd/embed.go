// Package crd embeds the service provider's generated CRDs (make generate writes the YAML here).
package crd

import "embed"

// FS holds the CRD manifests.
//
//go:embed *.yaml
var FS embed.FS
