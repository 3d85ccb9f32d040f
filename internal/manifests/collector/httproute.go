package collector

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/internal/naming"
)

// httpRoutes are the Gateway API HTTPRoutes <name>-<port>-httproute, one per non-gRPC receiver port,
// when spec.httpRoute is enabled with a gateway and the cluster serves the Gateway API. Each
// matches the path prefix /<port>, rewrites it to / and forwards to the collector Service. They are
// unstructured gateway.networking.k8s.io/v1 objects.
func (s *state) httpRoutes() []*unstructured.Unstructured {
	hr := &s.col.Spec.HttpRoute
	if !hr.Enabled || hr.Gateway == "" || !s.opts.GatewayAPI || s.sidecar() {
		return nil
	}
	gatewayNamespace := hr.GatewayNamespace
	if gatewayNamespace == "" {
		gatewayNamespace = s.col.Namespace
	}
	var hostnames []any
	for _, h := range hr.Hostnames {
		hostnames = append(hostnames, h)
	}
	var out []*unstructured.Unstructured
	for _, p := range s.exposedPorts() {
		if isGRPC(p) {
			continue
		}
		name := naming.HTTPRoute(s.col.Name, p.Name)
		spec := map[string]any{
			"parentRefs": []any{map[string]any{
				"group": "gateway.networking.k8s.io", "kind": "Gateway",
				"name": hr.Gateway, "namespace": gatewayNamespace,
			}},
			"rules": []any{map[string]any{
				"matches": []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/" + p.Name}}},
				"filters": []any{map[string]any{
					"type": "URLRewrite",
					"urlRewrite": map[string]any{"path": map[string]any{
						"type": "ReplacePrefixMatch", "replacePrefixMatch": "/",
					}},
				}},
				"backendRefs": []any{map[string]any{"name": naming.Service(s.col.Name), "port": int64(p.Port)}},
			}},
		}
		if len(hostnames) > 0 {
			spec["hostnames"] = hostnames
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{
				"name":      name,
				"namespace": s.col.Namespace,
				"labels":    stringMap(s.labels(name, true)),
			},
			"spec": spec,
		}}
		u.SetGroupVersionKind(HTTPRouteGVK)
		out = append(out, u)
	}
	return out
}
