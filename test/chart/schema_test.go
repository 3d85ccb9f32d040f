package chart

import (
	"strings"
	"testing"
)

// TestSchemaRejectsWrongTypes: a value of the wrong type fails the install with an error that
// names the value's path, at the top level and under opentelemetry-operator.
func TestSchemaRejectsWrongTypes(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		path   string
	}{
		{map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": "yes"}}}, "admissionWebhooks.certManager.enabled"},
		{map[string]any{"opentelemetry-operator": map[string]any{"manager": map[string]any{"extraArgs": "--x"}}}, "opentelemetry-operator.manager.extraArgs"},
		{map[string]any{"opentelemetry-operator": map[string]any{"enabled": "false"}}, "opentelemetry-operator.enabled"},
		{map[string]any{"imagePullSecrets": []any{map[string]any{"name": 3}}}, "imagePullSecrets.0"},
		{map[string]any{"crds": map[string]any{"installOtel": "true"}}, "crds.installOtel"},
		// Strict: a key neither this chart nor upstream's has (a typo) is refused, not ignored.
		{map[string]any{"manager": map[string]any{"extraArg": []any{"--x"}}}, "manager"},
		{map[string]any{"opentelemetry-operator": map[string]any{"someFutureValue": 1}}, "someFutureValue"},
		{map[string]any{"admissionWebhooks": map[string]any{"failurePolicy": "fail"}}, "admissionWebhooks.failurePolicy"},
	} {
		_, err := tryRender(t, release{values: tc.values})
		if tc.path == "manager" && err != nil && !strings.Contains(err.Error(), "extraArg") {
			t.Errorf("%v: error does not name the unknown key extraArg: %v", tc.values, err)
		}
		if err == nil {
			t.Errorf("%v: rendered without error", tc.values)
			continue
		}
		// The validator names paths with "/" or "." depending on its version.
		if msg := strings.ReplaceAll(err.Error(), "/", "."); !strings.Contains(msg, tc.path) {
			t.Errorf("%v: error does not name %s: %v", tc.values, tc.path, err)
		}
	}
}
