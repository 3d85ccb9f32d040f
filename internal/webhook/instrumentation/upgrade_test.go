package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/api/v1alpha1"
)

// TestUpgrade covers upstream's rule: an image still equal to an older default (its annotation)
// moves to the current default, for enabled languages only; user images never move.
func TestUpgrade(t *testing.T) {
	const oldJava = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.32.0"
	const oldGo = "ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go:v0.10.0-alpha"
	d := DefaultImages()
	javaKey, goKey := Languages[0].DefaultImageAnnotation(), Languages[4].DefaultImageAnnotation()
	tests := []struct {
		name          string
		opts          Options
		java, javaAnn string
		goImg, goAnn  string
		wantJava      string
		wantGo        string
		wantLangs     []string
	}{
		{name: "older default upgraded; go disabled by default", java: oldJava, javaAnn: oldJava, goImg: oldGo, goAnn: oldGo,
			wantJava: d.Java, wantGo: oldGo, wantLangs: []string{"java"}},
		{name: "go enabled by flag", opts: Options{Enabled: map[string]bool{"go": true}}, java: oldJava, javaAnn: oldJava, goImg: oldGo, goAnn: oldGo,
			wantJava: d.Java, wantGo: d.Go, wantLangs: []string{"java", "go"}},
		{name: "java disabled by flag", opts: Options{Enabled: map[string]bool{"java": false}}, java: oldJava, javaAnn: oldJava,
			wantJava: oldJava, wantLangs: nil},
		{name: "user image kept", java: "my/java:1", javaAnn: oldJava, wantJava: "my/java:1", wantLangs: nil},
		{name: "no annotation: never defaulted by an operator", java: oldJava, wantJava: oldJava, wantLangs: nil},
		{name: "already current", java: d.Java, javaAnn: d.Java, wantJava: d.Java, wantLangs: nil},
		{name: "flag image is the target", opts: Options{Images: Images{Java: "mirror/java:9"}}, java: oldJava, javaAnn: oldJava,
			wantJava: "mirror/java:9", wantLangs: []string{"java"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			inst := &v1alpha1.Instrumentation{}
			inst.Annotations = map[string]string{}
			inst.Spec.Java.Image, inst.Spec.Go.Image = tt.java, tt.goImg
			if tt.javaAnn != "" {
				inst.Annotations[javaKey] = tt.javaAnn
			}
			if tt.goAnn != "" {
				inst.Annotations[goKey] = tt.goAnn
			}
			g.Expect(Upgrade(inst, tt.opts)).To(Equal(tt.wantLangs))
			g.Expect(inst.Spec.Java.Image).To(Equal(tt.wantJava))
			g.Expect(inst.Spec.Go.Image).To(Equal(tt.wantGo))
			if tt.wantLangs != nil {
				g.Expect(inst.Annotations).To(HaveKeyWithValue(javaKey, tt.wantJava))
			}
			// The defaulting webhook, which the upgrade's write goes through, agrees.
			before := inst.DeepCopy()
			ApplyDefaults(inst, tt.opts.Images)
			g.Expect(inst.Spec.Java.Image).To(Equal(before.Spec.Java.Image))
		})
	}
}
