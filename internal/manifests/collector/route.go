package collector

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// routes are the OpenShift Routes <port>-<name>-route, one per receiver port, when
// spec.ingress.type is route and the cluster serves routes. They are unstructured
// route.openshift.io/v1 objects, so the operator does not depend on OpenShift's API module.
func (s *state) routes() []*unstructured.Unstructured {
	in := &s.col.Spec.Ingress
	if in.Type != v1beta1.IngressTypeRoute || !s.opts.OpenShiftRoutes || s.sidecar() {
		return nil
	}
	var termination string
	switch in.Route.Termination {
	case v1beta1.TLSRouteTerminationTypeInsecure:
	case v1beta1.TLSRouteTerminationTypeEdge:
		termination = "edge"
	case v1beta1.TLSRouteTerminationTypePassthrough:
		termination = "passthrough"
	case v1beta1.TLSRouteTerminationTypeReencrypt:
		termination = "reencrypt"
	default:
		return nil
	}
	ports := s.exposedPorts()
	out := make([]*unstructured.Unstructured, 0, len(ports))
	for _, p := range ports {
		portName, _ := collectorconfig.PortName(p.Name, p.Port)
		name := naming.Route(s.col.Name, p.Name)
		spec := map[string]any{
			"to":             map[string]any{"kind": "Service", "name": naming.Service(s.col.Name)},
			"port":           map[string]any{"targetPort": portName},
			"wildcardPolicy": "None",
		}
		if in.Hostname != "" {
			spec["host"] = portName + "." + in.Hostname
		}
		if termination != "" {
			spec["tls"] = map[string]any{"termination": termination}
		}
		metadata := map[string]any{
			"name":      name,
			"namespace": s.col.Namespace,
			"labels": map[string]any{
				manifestutils.LabelName:      name,
				manifestutils.LabelInstance:  s.col.Namespace + "." + s.col.Name,
				manifestutils.LabelManagedBy: manifestutils.ManagedBy,
				manifestutils.LabelComponent: manifestutils.ComponentCollector,
			},
		}
		if len(in.Annotations) > 0 {
			metadata["annotations"] = stringMap(in.Annotations)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": metadata, "spec": spec}}
		u.SetGroupVersionKind(RouteGVK)
		out = append(out, u)
	}
	return out
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
