package v1beta1

import networkingv1 "k8s.io/api/networking/v1"

// IngressType is the kind of object that exposes the collector.
//
// +kubebuilder:validation:Enum=ingress;route
type IngressType string

const (
	// IngressTypeIngress exposes the collector with a networking.k8s.io Ingress.
	IngressTypeIngress IngressType = "ingress"
	// IngressTypeRoute exposes the collector with OpenShift Routes.
	IngressTypeRoute IngressType = "route"
)

// TLSRouteTerminationType is the TLS termination of an OpenShift Route.
//
// +kubebuilder:validation:Enum=insecure;edge;passthrough;reencrypt
type TLSRouteTerminationType string

const (
	// TLSRouteTerminationTypeInsecure serves plain HTTP.
	TLSRouteTerminationTypeInsecure TLSRouteTerminationType = "insecure"
	// TLSRouteTerminationTypeEdge terminates TLS at the router (the webhook default).
	TLSRouteTerminationTypeEdge TLSRouteTerminationType = "edge"
	// TLSRouteTerminationTypePassthrough passes TLS through to the collector.
	TLSRouteTerminationTypePassthrough TLSRouteTerminationType = "passthrough"
	// TLSRouteTerminationTypeReencrypt terminates TLS at the router and re-encrypts to the
	// collector.
	TLSRouteTerminationTypeReencrypt TLSRouteTerminationType = "reencrypt"
)

// IngressRuleType is how the receivers are laid out in the Ingress.
//
// +kubebuilder:validation:Enum=path;subdomain
type IngressRuleType string

const (
	// IngressRuleTypePath gives each receiver port a path /<port-name> on the hostname (the
	// webhook default).
	IngressRuleTypePath IngressRuleType = "path"
	// IngressRuleTypeSubdomain gives each receiver port a host <port-name>.<hostname>; it needs a
	// hostname.
	IngressRuleTypeSubdomain IngressRuleType = "subdomain"
)

// Ingress configures how the collector's receivers are exposed outside the cluster.
type Ingress struct {
	// Type is ingress or route; nothing is exposed when empty.
	// +optional
	Type IngressType `json:"type,omitempty"`
	// RuleType is path or subdomain (ingress type only).
	// +optional
	RuleType IngressRuleType `json:"ruleType,omitempty"`
	// Hostname is the host to expose the receivers on.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Annotations are added to the generated Ingress or Routes.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// TLS is the Ingress's TLS configuration.
	// +optional
	TLS []networkingv1.IngressTLS `json:"tls,omitempty"`
	// IngressClassName is the Ingress's class; the cluster default class when empty.
	// +optional
	IngressClassName *string `json:"ingressClassName,omitempty"`
	// Route configures OpenShift Routes (route type only).
	// +optional
	Route OpenShiftRoute `json:"route,omitempty"`
}

// OpenShiftRoute configures the generated OpenShift Routes.
type OpenShiftRoute struct {
	// Termination is the Routes' TLS termination.
	// +optional
	Termination TLSRouteTerminationType `json:"termination,omitempty"`
}
