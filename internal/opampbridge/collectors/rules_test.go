package collectors

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseKey(t *testing.T) {
	tests := []struct {
		in      string
		want    Key
		wantErr string
	}{
		{in: "ns/name", want: Key{"ns", "name"}},
		{in: "ns/a.b-c", want: Key{"ns", "a.b-c"}},
		{in: "name", wantErr: "want namespace/name"},
		{in: "a/b/c", wantErr: "want namespace/name"},
		{in: "NS/x", wantErr: "namespace"},
		{in: "ns/", wantErr: "name"},
		{in: "", wantErr: "want namespace/name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			g := NewWithT(t)
			k, err := ParseKey(tt.in)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(k).To(Equal(tt.want))
			g.Expect(k.String()).To(Equal(tt.in))
		})
	}
}

func TestCheckManaged(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		ns     string
		ok     bool
	}{
		{"managed true in the bridge's namespace", map[string]string{ManagedLabel: "true"}, "home", true},
		{"managed true elsewhere is not every bridge's", map[string]string{ManagedLabel: "true"}, "apps", false},
		{"managed by name", map[string]string{ManagedLabel: "b"}, "apps", true},
		{"managed by another bridge", map[string]string{ManagedLabel: "other"}, "home", false},
		{"no labels", nil, "home", false},
		{"reporting wins", map[string]string{ManagedLabel: "b", ReportingLabel: "true"}, "home", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckManaged(tt.labels, Bridge{Namespace: "home", Name: "b"}, tt.ns, "x")
			g.Expect(err == nil).To(Equal(tt.ok), "%v", err)
		})
	}
}

func TestCheckComponents(t *testing.T) {
	cfg := map[string]any{
		"receivers":  map[string]any{"otlp": nil, "otlp/2": nil},
		"processors": map[string]any{"batch": nil},
		"exporters":  map[string]any{"debug": nil},
		"connectors": map[string]any{"forward/x": nil},
		"extensions": map[string]any{"health_check": nil},
	}
	tests := []struct {
		name    string
		allowed map[string][]string
		wantErr string
	}{
		{"nothing configured allows all", nil, ""},
		{"types allow named ids", map[string][]string{"receivers": {"otlp"}, "processors": {"batch"}, "exporters": {"debug"}, "connectors": {"forward"}, "extensions": {"health_check"}}, ""},
		{"exact ids", map[string][]string{"receivers": {"otlp", "otlp/2"}, "processors": {"batch"}, "exporters": {"debug"}, "connectors": {"forward/x"}, "extensions": {"health_check"}}, ""},
		{"a named id does not allow the type", map[string][]string{"receivers": {"otlp/2"}, "processors": {"batch"}, "exporters": {"debug"}, "connectors": {"forward"}, "extensions": {"health_check"}}, "receivers.otlp"},
		{"missing sections allow nothing", map[string][]string{"receivers": {"otlp"}, "processors": {"batch"}, "exporters": {"debug"}}, "connectors.forward/x, extensions.health_check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckComponents(cfg, tt.allowed)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

func TestParseCollector(t *testing.T) {
	good := `apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata: {name: a, labels: {opentelemetry.io/opamp-managed: "true"}}
spec: {config: {receivers: {otlp: {}}, exporters: {debug: {}}, service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}}
`
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"good", good, ""},
		{"empty", "", "empty"},
		{"v1alpha1", "apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata: {labels: {opentelemetry.io/opamp-managed: \"true\"}}\n", "only opentelemetry.io/v1beta1"},
		{"other name", "metadata: {name: b, labels: {opentelemetry.io/opamp-managed: \"true\"}}\n", "differs from the key"},
		{"unknown field", "metadata: {labels: {opentelemetry.io/opamp-managed: \"true\"}}\nspec: {bogus: 1}\n", "unknown field"},
		{"unlabelled", "spec: {}\n", "lacks the label"},
		{"not yaml", "{", "not a valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d, err := ParseCollector(Key{"ns", "a"}, []byte(tt.body), Rules{Bridge: Bridge{Namespace: "ns", Name: "b"}})
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Object.GetNamespace()).To(Equal("ns"))
			g.Expect(d.Object.Object).NotTo(HaveKey("status"))
		})
	}
}

func FuzzParseCollector(f *testing.F) {
	f.Add("ns/a", "metadata: {labels: {opentelemetry.io/opamp-managed: \"true\"}}\nspec: {config: {receivers: {otlp: {}}}}\n")
	f.Add("bad", "{")
	f.Add("ns/a", "spec: {config: {receivers: [1, 2]}}")
	f.Fuzz(func(t *testing.T, key, body string) {
		k, err := ParseKey(key)
		if err != nil {
			return
		}
		rules := Rules{Bridge: Bridge{Namespace: "ns", Name: "b"}, ComponentsAllowed: map[string][]string{"receivers": {"otlp"}}}
		d, err := ParseCollector(k, []byte(body), rules)
		if err == nil && (d.Object.GetName() != k.Name || d.Object.GetNamespace() != k.Namespace) {
			t.Fatalf("applied object %s/%s does not match key %s", d.Object.GetNamespace(), d.Object.GetName(), k)
		}
		if err == nil && CheckManaged(d.Object.GetLabels(), rules.Bridge, k.Namespace, "") != nil {
			t.Fatal("accepted an object the bridge may not manage")
		}
	})
}
