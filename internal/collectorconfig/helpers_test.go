package collectorconfig

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

// mustYAML decodes a YAML config into the generic JSON form the package works on.
func mustYAML(t testing.TB, s string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatalf("bad test JSON: %v", err)
	}
	return m
}
