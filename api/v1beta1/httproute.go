package v1beta1

// HttpRouteConfig configures a Gateway API HTTPRoute per HTTP receiver port.
type HttpRouteConfig struct {
	// Enabled turns the HTTPRoutes on.
	Enabled bool `json:"enabled" yaml:"enabled"`
	// Gateway is the name of the Gateway the routes attach to.
	Gateway string `json:"gateway" yaml:"gateway"`
	// GatewayNamespace is the Gateway's namespace; the collector's namespace when empty.
	// +optional
	GatewayNamespace string `json:"gatewayNamespace,omitempty" yaml:"gatewayNamespace,omitempty"`
	// Hostnames are the host names the routes match.
	// +optional
	Hostnames []string `json:"hostnames,omitempty" yaml:"hostnames,omitempty"`
}
