package collector

import (
	"encoding/json"
	"fmt"

	"github.com/otelop/otelop/api/v1beta1"
)

// configMap returns spec.config as the generic map that internal/collectorconfig works on.
func configMap(cfg *v1beta1.Config) (map[string]any, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding spec.config: %w", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decoding spec.config: %w", err)
	}
	return out, nil
}

// setConfig replaces cfg with the content of raw.
func setConfig(cfg *v1beta1.Config, raw map[string]any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("encoding defaulted spec.config: %w", err)
	}
	next := v1beta1.Config{}
	if err := json.Unmarshal(b, &next); err != nil {
		return fmt.Errorf("decoding defaulted spec.config: %w", err)
	}
	*cfg = next
	return nil
}
