package v1beta1

// NetworkPolicy configures the NetworkPolicy the operator generates for an operand.
type NetworkPolicy struct {
	// Enabled turns the NetworkPolicy on; the webhook defaults it when the operand.networkpolicy
	// feature gate is on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}
