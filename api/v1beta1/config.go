package v1beta1

import (
	"encoding/json"
)

// AnyConfig holds one free-form section of the collector configuration (for example all
// receivers). It marshals to and from a plain JSON object and keeps every key it is given.
//
// +kubebuilder:object:generate=false
type AnyConfig struct {
	// Object is the section's content as decoded JSON: maps, slices, strings, float64, bool and nil.
	Object map[string]any `json:"-" yaml:",inline"`
}

var (
	_ json.Marshaler   = AnyConfig{}
	_ json.Unmarshaler = &AnyConfig{}
)

// UnmarshalJSON decodes a JSON object into Object.
func (c *AnyConfig) UnmarshalJSON(b []byte) error {
	vals := map[string]any{}
	if err := json.Unmarshal(b, &vals); err != nil {
		return err
	}
	c.Object = vals
	return nil
}

// MarshalJSON encodes Object as a JSON object (null when Object is nil). The receiver is a value so
// that non-addressable copies marshal the same way as pointers do.
func (c AnyConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(c.Object)
}

// DeepCopyInto copies c into out; nested maps and slices are copied, not shared.
func (c *AnyConfig) DeepCopyInto(out *AnyConfig) {
	*out = *c
	if c.Object != nil {
		out.Object = copyMap(c.Object)
	}
}

// DeepCopy returns a deep copy of c, or nil when c is nil.
func (c *AnyConfig) DeepCopy() *AnyConfig {
	if c == nil {
		return nil
	}
	out := new(AnyConfig)
	c.DeepCopyInto(out)
	return out
}

// copyMap copies a decoded JSON object recursively.
func copyMap(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = copyValue(v)
	}
	return out
}

// copyValue copies a decoded JSON value. Maps and slices are copied recursively; other values
// (strings, numbers, booleans, nil) are immutable and returned as they are.
func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if t == nil {
			return t
		}
		return copyMap(t)
	case []any:
		if t == nil {
			return t
		}
		out := make([]any, len(t))
		for i := range t {
			out[i] = copyValue(t[i])
		}
		return out
	case map[string]string:
		if t == nil {
			return t
		}
		out := make(map[string]string, len(t))
		for k, s := range t {
			out[k] = s
		}
		return out
	case []string:
		if t == nil {
			return t
		}
		return append([]string(nil), t...)
	default:
		return v
	}
}

// Pipeline lists the components of one service pipeline by ID.
type Pipeline struct {
	// Exporters are the IDs of the pipeline's exporters.
	Exporters []string `json:"exporters" yaml:"exporters"`
	// Processors are the IDs of the pipeline's processors, in order.
	Processors []string `json:"processors,omitempty" yaml:"processors,omitempty"`
	// Receivers are the IDs of the pipeline's receivers.
	Receivers []string `json:"receivers" yaml:"receivers"`
}

// Config is the collector configuration. The field order is part of the API: the name of the
// generated ConfigMap is derived from the hash of this struct's JSON encoding, so it must match
// upstream's order (receivers, exporters, processors, connectors, extensions, service).
type Config struct {
	// Receivers configures the receivers by ID.
	// +kubebuilder:pruning:PreserveUnknownFields
	Receivers AnyConfig `json:"receivers" yaml:"receivers"`
	// Exporters configures the exporters by ID.
	// +kubebuilder:pruning:PreserveUnknownFields
	Exporters AnyConfig `json:"exporters" yaml:"exporters"`
	// Processors configures the processors by ID.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Processors *AnyConfig `json:"processors,omitempty" yaml:"processors,omitempty"`
	// Connectors configures the connectors by ID.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Connectors *AnyConfig `json:"connectors,omitempty" yaml:"connectors,omitempty"`
	// Extensions configures the extensions by ID.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Extensions *AnyConfig `json:"extensions,omitempty" yaml:"extensions,omitempty"`
	// Service says which extensions run, how the collector reports about itself, and the
	// pipelines.
	Service Service `json:"service" yaml:"service"`
}

// Service is the service section of the collector configuration.
type Service struct {
	// Extensions are the IDs of the extensions to start.
	// +optional
	Extensions []string `json:"extensions,omitempty" yaml:"extensions,omitempty"`
	// Telemetry configures the collector's own logs, metrics and traces.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Telemetry *AnyConfig `json:"telemetry,omitempty" yaml:"telemetry,omitempty"`
	// Pipelines maps pipeline IDs (such as traces or metrics/internal) to their components.
	// +kubebuilder:pruning:PreserveUnknownFields
	Pipelines map[string]*Pipeline `json:"pipelines" yaml:"pipelines"`
}
