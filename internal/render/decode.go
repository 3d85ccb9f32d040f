package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

// document is one YAML document of the input: a collector, a decoding error, or neither (another
// kind, or empty).
type document struct {
	index int // 1-based
	col   *v1beta1.OpenTelemetryCollector
	err   error
}

// decode splits a YAML stream into documents and decodes the OpenTelemetryCollectors. The returned
// error is for a stream that cannot be split at all.
func decode(data []byte, sets []string, namespace string) ([]document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []document
	for i := 1; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return docs, fmt.Errorf("document %d: %w", i, err)
		}
		if m == nil {
			continue
		}
		docs = append(docs, decodeOne(i, m, sets, namespace))
	}
	return docs, nil
}

func decodeOne(index int, m map[string]any, sets []string, namespace string) document {
	d := document{index: index}
	for _, s := range sets {
		if err := set(m, s); err != nil {
			d.err = err
			return d
		}
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	if kind != "OpenTelemetryCollector" {
		return d
	}
	b, err := json.Marshal(m)
	if err != nil {
		d.err = err
		return d
	}
	var col *v1beta1.OpenTelemetryCollector
	switch apiVersion {
	case v1beta1.GroupVersion.String():
		col = &v1beta1.OpenTelemetryCollector{}
		err = strictJSON(b, col)
	case v1alpha1.GroupVersion.String():
		var alpha v1alpha1.OpenTelemetryCollector
		if err = strictJSON(b, &alpha); err == nil {
			col, err = v1alpha1.ToHub(&alpha)
		}
		if err == nil {
			// Conversion keeps a config that does not parse as text; there is nothing to render.
			err = v1alpha1.UnparsedConfig(col)
		}
	default:
		err = fmt.Errorf("apiVersion: unsupported value %q (want %s or %s)", apiVersion,
			v1beta1.GroupVersion, v1alpha1.GroupVersion)
	}
	if err != nil {
		d.err = err
		return d
	}
	col.APIVersion, col.Kind = v1beta1.GroupVersion.String(), "OpenTelemetryCollector"
	if col.Name == "" {
		d.err = errors.New("metadata.name: Required value")
		return d
	}
	if col.Namespace == "" {
		col.Namespace = namespace
	}
	d.col = col
	return d
}

// strictJSON decodes b into out and rejects unknown fields, naming their path.
func strictJSON(b []byte, out any) error {
	if err := sigsyaml.UnmarshalStrict(b, out); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: ")
		return errors.New(strings.TrimPrefix(msg, "json: "))
	}
	return nil
}

// set applies "a.b.c=value" to m; value is read as YAML.
func set(m map[string]any, expr string) error {
	path, raw, ok := strings.Cut(expr, "=")
	if !ok || path == "" {
		return fmt.Errorf("--set %q: want path=value", expr)
	}
	var value any
	if err := yaml.Unmarshal([]byte(raw), &value); err != nil {
		return fmt.Errorf("--set %q: %w", expr, err)
	}
	keys := strings.Split(path, ".")
	cur := m
	for i, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			if cur[k] != nil {
				return fmt.Errorf("--set %q: %s is not an object", expr, strings.Join(keys[:i+1], "."))
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = value
	return nil
}
