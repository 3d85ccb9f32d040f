package v1alpha1

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// storedAlpha is a v1alpha1 collector as a cluster that ran upstream with v1alpha1 as the storage
// version may hold it: its config does not parse.
func storedAlpha(config string) *OpenTelemetryCollector {
	return &OpenTelemetryCollector{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "old", Annotations: map[string]string{"team": "a"}},
		Spec: OpenTelemetryCollectorSpec{
			Mode:     ModeStatefulSet,
			Replicas: int32Ptr(2),
			Config:   config,
		},
	}
}

func int32Ptr(v int32) *int32 { return &v }

// throughStorage encodes hub as the API server stores and serves it and decodes it again.
func throughStorage(g Gomega, hub *v1beta1.OpenTelemetryCollector) *v1beta1.OpenTelemetryCollector {
	b, err := json.Marshal(hub)
	g.Expect(err).NotTo(HaveOccurred())
	out := &v1beta1.OpenTelemetryCollector{}
	g.Expect(json.Unmarshal(b, out)).To(Succeed())
	return out
}

// TestUnparsableConfigConvertsAndComesBack is upstream #4288 as a unit: converting a stored
// v1alpha1 collector whose config does not parse used to fail (and with it every v1beta1 list and
// watch of collectors). It converts now, keeps the exact text in AnnotationUnparsedConfig, and
// converting back gives the same text, byte for byte.
func TestUnparsableConfigConvertsAndComesBack(t *testing.T) {
	for name, config := range map[string]string{
		"invalid yaml":          "receivers: [unclosed\n  # a comment that must survive\n",
		"config is not a map":   "receivers: 5",
		"a list, not a mapping": "- a\n- b\n",
		"tabs":                  "receivers:\n\totlp: {}\n",
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			in := storedAlpha(config)
			hub, err := ToHub(in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(hub.Annotations).To(HaveKeyWithValue(AnnotationUnparsedConfig, config))
			g.Expect(hub.Annotations).To(HaveKeyWithValue("team", "a"))
			g.Expect(hub.Spec.Mode).To(Equal(v1beta1.ModeStatefulSet))
			g.Expect(*hub.Spec.Replicas).To(Equal(int32(2)))
			// The sections the v1beta1 schema requires are there, empty.
			cfg, err := json.Marshal(hub.Spec.Config)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(cfg)).To(MatchJSON(`{"receivers":{},"exporters":{},"service":{"pipelines":{}}}`))

			// The controller's (and admission's) view: an error naming the field, the parse
			// error and where the text is.
			uerr := UnparsedConfig(hub)
			g.Expect(uerr).To(MatchError(ContainSubstring("spec.config: invalid collector configuration")))
			g.Expect(uerr).To(MatchError(ContainSubstring(AnnotationUnparsedConfig)))

			stored := throughStorage(g, hub)
			g.Expect(UnparsedConfig(stored)).To(HaveOccurred())
			back, err := FromHub(stored)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(back.Spec.Config).To(Equal(config), "the exact text comes back")
			g.Expect(back.Annotations).To(Equal(map[string]string{"team": "a"}))
			g.Expect(back.Spec.Mode).To(Equal(ModeStatefulSet))

			again, err := ToHub(back)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again.Annotations).To(HaveKeyWithValue(AnnotationUnparsedConfig, config))
		})
	}
}

// TestHubConfigReplacesUnparsedText: a v1beta1 client that sets spec.config (leaving the
// annotation in place, as kubectl edit does) wins: the collector is no longer reported, and the
// v1alpha1 form shows the new configuration without the annotation.
func TestHubConfigReplacesUnparsedText(t *testing.T) {
	g := NewWithT(t)
	hub, err := ToHub(storedAlpha("receivers: [unclosed"))
	g.Expect(err).NotTo(HaveOccurred())
	fixed, err := parseConfig(simpleConfig)
	g.Expect(err).NotTo(HaveOccurred())
	hub.Spec.Config = fixed
	g.Expect(UnparsedConfig(hub)).To(Succeed())
	alpha, err := FromHub(hub)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(alpha.Annotations).NotTo(HaveKey(AnnotationUnparsedConfig))
	g.Expect(alpha.Spec.Config).To(ContainSubstring("verbosity: detailed"))
}

// TestParsableConfigDropsStaleAnnotation: a v1alpha1 object whose config parses never carries
// the annotation into v1beta1, even when it arrives with one (copied from an older read).
func TestParsableConfigDropsStaleAnnotation(t *testing.T) {
	g := NewWithT(t)
	in := storedAlpha(simpleConfig)
	in.Annotations[AnnotationUnparsedConfig] = "receivers: [unclosed"
	hub, err := ToHub(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hub.Annotations).To(Equal(map[string]string{"team": "a"}))
	g.Expect(UnparsedConfig(hub)).To(Succeed())
	g.Expect(hub.Spec.Config.Exporters.Object).To(HaveKey("debug"))

	only := storedAlpha(simpleConfig)
	only.Annotations = map[string]string{AnnotationUnparsedConfig: "x: ["}
	hub, err = ToHub(only)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hub.Annotations).To(BeNil())
}
