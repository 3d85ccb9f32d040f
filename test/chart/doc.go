// Package chart tests the Helm chart charts/opentelemetry-operator with the Helm Go SDK: lint,
// rendering with the values users and the OpenMCP service provider set, equality with what
// config/default renders, and server-side dry-run apply of every rendered object on a real
// kube-apiserver (envtest).
//
// It is its own Go module because helm.sh/helm/v3 brings a large dependency graph that the product
// must not carry; it replaces github.com/otelop/otelop with the repository root so that it can use
// the service provider's Helm values (internal/serviceprovider/flux), the certificate flag defaults
// (internal/webhook/certs) and the envtest helper (internal/testenv).
package chart
