package v1alpha1

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/otelop/otelop/api/v1beta1"
)

// FuzzHubRoundTrip decodes arbitrary JSON as a v1beta1 collector and requires that converting
// it to v1alpha1 and back gives the same object.
func FuzzHubRoundTrip(f *testing.F) {
	seed, err := json.Marshal(hubFull())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"spec":{"config":{"receivers":{"otlp":{"protocols":{"grpc":null}}},"exporters":{"debug":{}},"service":{"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}}}`))
	f.Add([]byte(`{"spec":{"targetAllocator":{"prometheusCR":{"podMonitorSelector":{"matchLabels":{"a":"b"}},"serviceMonitorSelector":null}}}}`))
	f.Add([]byte(`{"spec":{"config":{"receivers":{"x":{"s":"yes","n":"null","t":"~","f":1.5e300,"e":"","l":[true,false,null]}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &v1beta1.OpenTelemetryCollector{}
		if err := json.Unmarshal(data, in); err != nil {
			return
		}
		if _, ok := in.Annotations[AnnotationUnparsedConfig]; ok {
			// Only ToHub writes it, with an empty config (TestUnparsableConfigConvertsAndComesBack);
			// a hub that sets a config as well replaces the text (TestHubConfigReplacesUnparsedText).
			return
		}
		alpha, err := FromHub(in)
		if err != nil {
			return
		}
		back, err := ToHub(alpha)
		if err != nil {
			t.Fatalf("ToHub failed on FromHub's output: %v\nv1alpha1 config:\n%s", err, alpha.Spec.Config)
		}
		back.TypeMeta = in.TypeMeta
		if !equality.Semantic.DeepEqual(back, in) {
			got, _ := json.Marshal(back)
			t.Fatalf("round trip differs\n in: %s\nout: %s", data, got)
		}
	})
}

// FuzzAlphaConfigRoundTrip feeds arbitrary v1alpha1 configuration strings through the hub and
// back; whatever parses must come back as the same data, and whatever does not as the same text.
func FuzzAlphaConfigRoundTrip(f *testing.F) {
	f.Add(simpleConfig)
	f.Add("receivers:\n  otlp: {}\nservice:\n  pipelines: {}\n")
	f.Add("exporters: {debug: {verbosity: 'yes'}}\n")
	f.Add("receivers: [unclosed")
	f.Fuzz(func(t *testing.T, cfg string) {
		in := &OpenTelemetryCollector{Spec: OpenTelemetryCollectorSpec{Config: cfg}}
		hub, err := ToHub(in)
		if err != nil {
			return
		}
		alpha, err := FromHub(hub)
		if err != nil {
			t.Fatalf("FromHub failed: %v", err)
		}
		if _, unparsed := hub.Annotations[AnnotationUnparsedConfig]; unparsed && alpha.Spec.Config != cfg {
			t.Fatalf("unparsable config not restored exactly\n in: %q\nout: %q", cfg, alpha.Spec.Config)
		}
		again, err := ToHub(alpha)
		if err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, alpha.Spec.Config)
		}
		if !equality.Semantic.DeepEqual(again.Spec.Config, hub.Spec.Config) {
			t.Fatalf("config changed in the round trip\n in: %q\nout: %q", cfg, alpha.Spec.Config)
		}
	})
}
