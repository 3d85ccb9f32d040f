// Package targetallocator builds the objects the operator generates for a TargetAllocator: the
// ConfigMap holding targetallocator.yaml, the Deployment running the target allocator image
// (this project's by default; upstream's works the same), its ServiceAccount, the Service
// collectors' prometheus receivers ask for targets, a PodDisruptionBudget, and on request a
// NetworkPolicy and a ServiceMonitor. Names, labels, selector
// labels, ports, the container name and the configuration file's keys are upstream's, so
// either target allocator binary reads the file and tools find the same objects.
//
// The builders are pure: every operator-wide input (default image, filters, feature gates,
// detected APIs, the operator's proxy variables) is a field of Options, and the collector that
// uses the target allocator (when there is one) is resolved by the caller.
//
// Differences from upstream, all deliberate:
//   - the --labels-filter and --annotations-filter apply to every generated object (upstream
//     filters labels only on the NetworkPolicy);
//   - with allocation strategy least-weighted no PodDisruptionBudget is generated even when
//     spec.podDisruptionBudget is set (upstream fails the whole reconcile), so the target
//     allocator keeps running;
//   - the PodDisruptionBudget does not carry the configuration hash, so a scrape config change
//     rewrites the ConfigMap and rolls the pod but leaves the PodDisruptionBudget alone.
//
// Mutual TLS between collectors and the target allocator (see MTLSEnabled) adds the https
// listener on 8443 (file, container port, Service port 443) and mounts "<name>-ta-server-cert" at
// /tls. The certificates come from the operator, not cert-manager: CertificateSecrets builds the
// Secrets from data the target allocator controller issues and rotates (no cert-manager Issuer or
// Certificate is generated; a Secret of those names that the operator did not create is used as
// it is).
package targetallocator
