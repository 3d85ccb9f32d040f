package manifestutils

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Encode prints objects for people and GitOps tools: format "yaml" gives a multi-document stream
// ("---" before each object), "json" a JSON array, indented. Server-populated fields that builders
// leave empty (status, metadata.creationTimestamp) are left out.
func Encode(objs []client.Object, format string) ([]byte, error) {
	clean := make([]any, len(objs))
	for i, o := range objs {
		m, err := toMap(o)
		if err != nil {
			return nil, fmt.Errorf("%T %s: %w", o, o.GetName(), err)
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
			delete(md, "creationTimestamp")
		}
		clean[i] = m
	}
	var buf bytes.Buffer
	switch format {
	case "yaml", "":
		for _, m := range clean {
			b, err := yaml.Marshal(m)
			if err != nil {
				return nil, err
			}
			buf.WriteString("---\n")
			buf.Write(b)
		}
	case "json":
		b, err := json.MarshalIndent(clean, "", "  ")
		if err != nil {
			return nil, err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	default:
		return nil, fmt.Errorf("unknown output format %q (want yaml or json)", format)
	}
	return buf.Bytes(), nil
}

func toMap(o client.Object) (map[string]any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}
