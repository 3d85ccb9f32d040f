package collector

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/otelop/otelop/api/v1beta1"
)

// RawConfig returns spec.config in the generic decoded-JSON form collectorconfig works on. The
// returned map shares the component sections with cfg and must not be modified.
func RawConfig(cfg v1beta1.Config) map[string]any {
	raw := make(map[string]any, 6)
	raw["receivers"] = cfg.Receivers.Object
	raw["exporters"] = cfg.Exporters.Object
	if cfg.Processors != nil {
		raw["processors"] = cfg.Processors.Object
	}
	if cfg.Connectors != nil {
		raw["connectors"] = cfg.Connectors.Object
	}
	if cfg.Extensions != nil {
		raw["extensions"] = cfg.Extensions.Object
	}
	svc := make(map[string]any, 3)
	if cfg.Service.Extensions != nil {
		svc["extensions"] = stringsToAny(cfg.Service.Extensions)
	}
	if cfg.Service.Telemetry != nil {
		svc["telemetry"] = cfg.Service.Telemetry.Object
	}
	if cfg.Service.Pipelines != nil {
		pipelines := make(map[string]any, len(cfg.Service.Pipelines))
		for id, p := range cfg.Service.Pipelines {
			if p == nil {
				pipelines[id] = nil
				continue
			}
			m := map[string]any{"receivers": stringsToAny(p.Receivers), "exporters": stringsToAny(p.Exporters)}
			if p.Processors != nil {
				m["processors"] = stringsToAny(p.Processors)
			}
			pipelines[id] = m
		}
		svc["pipelines"] = pipelines
	}
	raw["service"] = svc
	return raw
}

// ConfigFromRaw converts a decoded config (such as the output of collectorconfig.ApplyDefaults)
// back to the typed spec.config.
func ConfigFromRaw(raw map[string]any) (v1beta1.Config, error) {
	var cfg v1beta1.Config
	b, err := json.Marshal(raw)
	if err != nil {
		return cfg, err
	}
	err = json.Unmarshal(b, &cfg)
	return cfg, err
}

// ConfigHash returns the hex sha256 of the JSON encoding of spec.config, as upstream computes it
// for the ConfigMap name and the pod template's opentelemetry-operator-config/sha256 annotation.
func ConfigHash(cfg v1beta1.Config) (string, error) {
	b, err := json.Marshal(&cfg)
	if err != nil {
		return "", fmt.Errorf("spec.config: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func stringsToAny(in []string) []any {
	if in == nil {
		return nil
	}
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}

// ConfigYAML returns spec.config as the YAML document the collector reads, without any target
// allocator rewrite (the sidecar injector puts it in the OTEL_CONFIG of a pod of another namespace). The text is upstream's, byte for
// byte (see configText).
func ConfigYAML(otelcol v1beta1.OpenTelemetryCollector) (string, error) {
	out, err := configText(otelcol.Spec.Config)
	if err != nil {
		return "", fmt.Errorf("spec.config: %w", err)
	}
	return out, nil
}
