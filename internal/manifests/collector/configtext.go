package collector

import (
	goyaml "github.com/goccy/go-yaml"
	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/otelop/otelop/api/v1beta1"
)

// The collector.yaml text must be upstream's byte for byte: a takeover that rewrote every
// collector's ConfigMap would be a change users see (diffs, GitOps drift, config-reload churn). The
// text is therefore produced the way upstream v0.140.0's operator produces it (observed by running
// it, see test/takeover), which pins both YAML libraries involved:
//
//   - spec.config as a typed v1beta1.Config (its struct field order: receivers, exporters,
//     processors, connectors, extensions, service; service: extensions, telemetry, pipelines; each
//     pipeline: exporters, processors, receivers; component maps with sorted keys) encoded by
//     github.com/goccy/go-yaml with 2-space indentation, list items indented under their key, and
//     whole-number floats written as integers;
//   - with a target allocator, that text read back into generic maps by the yaml.v2 parser and
//     encoded again with 4-space indentation, so every map, the top level included, has sorted keys.
//
// Upstream v0.140.0 builds with goccy/go-yaml v1.18.0; this module gets v1.19.2 (required by
// another dependency), whose encoder differs only for non-string map keys (never produced here: the
// first encoding quotes every key the yaml.v2 parser would read as anything but a string) and for
// flow-style values on their own line (never produced here). The goldens of this package and the
// takeover test (test/takeover, against upstream's binary) catch a bump that changes the output.
var (
	configTextOptions    = []goyaml.EncodeOption{goyaml.IndentSequence(true), goyaml.AutoInt()}
	rewrittenTextOptions = []goyaml.EncodeOption{goyaml.Indent(4), goyaml.IndentSequence(true), goyaml.AutoInt()}
)

// configText renders a config as the collector.yaml text of a collector without target allocator
// (and the OTEL_CONFIG of a sidecar).
func configText(cfg v1beta1.Config) (string, error) {
	b, err := goyaml.MarshalWithOptions(&cfg, configTextOptions...)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// rewrittenConfigText renders a decoded config whose prometheus receiver has been pointed at the
// target allocator, as the collector.yaml text of a collector with a target allocator.
func rewrittenConfigText(raw map[string]any) (string, error) {
	cfg, err := ConfigFromRaw(raw)
	if err != nil {
		return "", err
	}
	text, err := configText(cfg)
	if err != nil {
		return "", err
	}
	generic := map[any]any{}
	if err := yamlv2.Unmarshal([]byte(text), &generic); err != nil {
		return "", err
	}
	b, err := goyaml.MarshalWithOptions(generic, rewrittenTextOptions...)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
