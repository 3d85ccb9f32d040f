package takeover

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/json"
)

// obj parses a made-up object in JSON, with whole numbers as int64 as the API client decodes them.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGeneratedObjectsGroupsByInstance checks which objects of a snapshot count as a collector's
// generated objects: those with its instance label or that it controls, not pods or revisions,
// not other namespaces'.
func TestGeneratedObjectsGroupsByInstance(t *testing.T) {
	s := snapshot{
		"OpenTelemetryCollector/gateway":        obj(t, `{"metadata":{"name":"gateway"}}`),
		"OpenTelemetryCollector/sidecar":        obj(t, `{"metadata":{"name":"sidecar"}}`),
		"OpenTelemetryCollector.status/gateway": obj(t, `{"status":{}}`),
		"Deployment/gateway-collector":          obj(t, `{"metadata":{"labels":{"app.kubernetes.io/instance":"takeover.gateway"}}}`),
		"ConfigMap/gateway-collector-1234":      obj(t, `{"metadata":{"labels":{"app.kubernetes.io/instance":"takeover.gateway"}}}`),
		"ClusterRole/gateway-collector":         obj(t, `{"metadata":{"labels":{"app.kubernetes.io/instance":"takeover-twins.gateway"}}}`),
		"TargetAllocator/gateway": obj(t, `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"opentelemetry-operator"},`+
			`"ownerReferences":[{"kind":"OpenTelemetryCollector","name":"gateway","controller":true}]}}`),
		"Service/other":                    obj(t, `{"metadata":{"ownerReferences":[{"kind":"OpenTelemetryCollector","name":"gateway"}]}}`),
		"ReplicaSet/gateway-collector-abc": obj(t, `{"metadata":{"labels":{"app.kubernetes.io/instance":"takeover.gateway"}}}`),
		"Pod/gateway-collector-abc-def":    obj(t, `{"metadata":{"labels":{"app.kubernetes.io/instance":"takeover.gateway"}}}`),
		"Deployment/app":                   obj(t, `{"metadata":{"labels":{"app":"app"}}}`),
	}
	got := generatedObjects(s, "takeover")
	if g := strings.Join(got["gateway"], ","); g != "ConfigMap/gateway-collector-1234,Deployment/gateway-collector,TargetAllocator/gateway" {
		t.Errorf("gateway's generated objects: %s", g)
	}
	if g, ok := got["sidecar"]; !ok || len(g) != 0 {
		t.Errorf("sidecar (nothing generated): %v, %v; want an empty entry, so that the check reports it", g, ok)
	}
	if len(got) != 2 {
		t.Errorf("collectors: %v; want gateway and sidecar", got)
	}
}

// TestAdoptionProblemsNeedsOurManagerAndTheLabel checks the adoption assertion on made-up
// objects: upstream's alone, restored by someone else, ours by apply, ours by create.
func TestAdoptionProblemsNeedsOurManagerAndTheLabel(t *testing.T) {
	for _, c := range []struct {
		name, obj string
		want      []string // substrings, one per problem
	}{
		{"upstream's, drift not restored",
			`{"metadata":{"labels":{},"managedFields":[{"manager":"upstream-operator","operation":"Update"}]}}`,
			[]string{"label app.kubernetes.io/part-of not restored", "no managedFields entry of opentelemetry-operator (managers: upstream-operator)"}},
		{"label restored by someone else",
			`{"metadata":{"labels":{"app.kubernetes.io/part-of":"opentelemetry"},"managedFields":[{"manager":"upstream-operator"},{"manager":"opentelemetry-operator","subresource":"status"}]}}`,
			[]string{"no managedFields entry of opentelemetry-operator"}},
		{"a wrong label value", `{"metadata":{"labels":{"app.kubernetes.io/part-of":"x"},"managedFields":[{"manager":"opentelemetry-operator","operation":"Apply"}]}}`,
			[]string{`not restored ("x", want "opentelemetry")`}},
		{"applied by us", `{"metadata":{"labels":{"app.kubernetes.io/part-of":"opentelemetry"},"managedFields":[{"manager":"upstream-operator"},{"manager":"opentelemetry-operator","operation":"Apply"}]}}`, nil},
		{"created by us", `{"metadata":{"labels":{"app.kubernetes.io/part-of":"opentelemetry"},"managedFields":[{"manager":"opentelemetry-operator-create-0123456789abcdef","operation":"Update"}]}}`, nil},
	} {
		got := adoptionProblems(obj(t, c.obj), "app.kubernetes.io/part-of", "opentelemetry")
		if len(got) != len(c.want) {
			t.Errorf("%s: problems %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q, want it to say %q", c.name, got[i], w)
			}
		}
	}
}

// TestDriftLabelPrefersPartOf checks which label the adoption check removes: part-of, else
// managed-by (a collector's TargetAllocator), else none.
func TestDriftLabelPrefersPartOf(t *testing.T) {
	for in, want := range map[string]string{
		`{"metadata":{"labels":{"app.kubernetes.io/part-of":"opentelemetry","app.kubernetes.io/managed-by":"opentelemetry-operator"}}}`: "app.kubernetes.io/part-of=opentelemetry",
		`{"metadata":{"labels":{"team":"a","app.kubernetes.io/managed-by":"opentelemetry-operator"}}}`:                                  "app.kubernetes.io/managed-by=opentelemetry-operator",
		`{"metadata":{"labels":{"team":"a"}}}`: "",
	} {
		label, value, ok := driftLabel(obj(t, in))
		got := ""
		if ok {
			got = label + "=" + value
		}
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestStatusProblemsNeedOurStatusAtTheGeneration checks the status assertion on made-up
// collectors: upstream's status (no observedGeneration), ours at an older generation, ours not
// Ready, ours written under another manager, and ours as it should be.
func TestStatusProblemsNeedOurStatusAtTheGeneration(t *testing.T) {
	const ours = `"managedFields":[{"manager":"upstream-operator"},{"manager":"opentelemetry-operator","operation":"Update","subresource":"status"}]`
	for _, c := range []struct {
		name, obj string
		want      []string
	}{
		{"upstream's status", `{"metadata":{"generation":2,"managedFields":[{"manager":"upstream-operator","subresource":"status"}]},` +
			`"status":{"scale":{"replicas":2},"version":"0.140.0"}}`,
			[]string{"status.observedGeneration is 0, metadata.generation 2", "no Ready condition", "no status managedFields entry of opentelemetry-operator"}},
		{"ours, an older generation", `{"metadata":{"generation":3,` + ours + `},` +
			`"status":{"observedGeneration":2,"conditions":[{"type":"Ready","status":"True","observedGeneration":2}]}}`,
			[]string{"status.observedGeneration is 2, metadata.generation 3", "Ready's observedGeneration is 2, metadata.generation 3"}},
		{"ours, not Ready", `{"metadata":{"generation":2,` + ours + `},` +
			`"status":{"observedGeneration":2,"conditions":[{"type":"Ready","status":"False","reason":"Progressing","observedGeneration":2}]}}`,
			[]string{"Ready is False (Progressing"}},
		{"ours", `{"metadata":{"generation":2,` + ours + `},` +
			`"status":{"observedGeneration":2,"conditions":[{"type":"Ready","status":"True","observedGeneration":2}]}}`, nil},
	} {
		got := statusProblems(obj(t, c.obj))
		if len(got) != len(c.want) {
			t.Errorf("%s: problems %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q, want it to say %q", c.name, got[i], w)
			}
		}
	}
}
