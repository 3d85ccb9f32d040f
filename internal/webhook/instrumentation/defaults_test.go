package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1alpha1"
)

func list(cpu, mem string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

// TestDefaultImagesAreUpstreams pins the images to upstream v0.140.0's versions.txt and
// internal/config defaults (the Go agent comes from the Go instrumentation project's registry,
// Nginx uses the Apache HTTPD image).
func TestDefaultImagesAreUpstreams(t *testing.T) {
	g := NewWithT(t)
	g.Expect(DefaultImages()).To(Equal(Images{
		Java:        "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.33.6",
		NodeJS:      "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-nodejs:0.66.0",
		Python:      "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-python:0.59b0",
		DotNet:      "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-dotnet:1.2.0",
		Go:          "ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go:v0.22.1",
		ApacheHttpd: "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-apache-httpd:1.0.4",
		Nginx:       "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-apache-httpd:1.0.4",
	}))
}

// TestApplyDefaultsEmptySpec: every language gets upstream's image, resources and annotation.
func TestApplyDefaultsEmptySpec(t *testing.T) {
	g := NewWithT(t)
	inst := &v1alpha1.Instrumentation{}
	ApplyDefaults(inst, Images{})
	s := inst.Spec
	want := map[string]struct {
		image            string
		res              corev1.ResourceRequirements
		limits, requests corev1.ResourceList
	}{
		"java":         {s.Java.Image, s.Java.Resources, list("500m", "256Mi"), list("50m", "64Mi")},
		"nodejs":       {s.NodeJS.Image, s.NodeJS.Resources, list("500m", "256Mi"), list("50m", "128Mi")},
		"python":       {s.Python.Image, s.Python.Resources, list("500m", "256Mi"), list("50m", "64Mi")},
		"dotnet":       {s.DotNet.Image, s.DotNet.Resources, list("500m", "256Mi"), list("50m", "128Mi")},
		"go":           {s.Go.Image, s.Go.Resources, list("500m", "256Mi"), list("50m", "64Mi")},
		"apache-httpd": {s.ApacheHttpd.Image, s.ApacheHttpd.Resources, list("500m", "256Mi"), list("1m", "128Mi")},
		"nginx":        {s.Nginx.Image, s.Nginx.Resources, list("500m", "256Mi"), list("1m", "128Mi")},
	}
	d := DefaultImages()
	g.Expect(inst.Annotations).To(HaveLen(len(Languages)))
	for _, l := range Languages {
		w := want[l.Name]
		g.Expect(w.image).To(Equal(*l.image(&d)), l.Name)
		g.Expect(w.res.Limits).To(Equal(w.limits), l.Name)
		g.Expect(w.res.Requests).To(Equal(w.requests), l.Name)
		g.Expect(inst.Annotations).To(HaveKeyWithValue(
			"instrumentation.opentelemetry.io/default-auto-instrumentation-"+l.Name+"-image", w.image))
	}
	g.Expect(s.ApacheHttpd.Version).To(Equal("2.4"))
	g.Expect(s.ApacheHttpd.ConfigPath).To(Equal("/usr/local/apache2/conf"))
	g.Expect(s.Nginx.ConfigFile).To(Equal("/etc/nginx/nginx.conf"))
	// Not defaulted, as upstream.
	g.Expect(s.Exporter).To(Equal(v1alpha1.Exporter{}))
	g.Expect(s.Propagators).To(BeNil())
	g.Expect(s.Sampler).To(Equal(v1alpha1.Sampler{}))

	again := inst.DeepCopy()
	ApplyDefaults(again, Images{})
	g.Expect(again).To(Equal(inst), "defaulting twice changes nothing")
}

// TestApplyDefaultsKeepsUserSettings: set fields are kept; flag images replace upstream's.
func TestApplyDefaultsKeepsUserSettings(t *testing.T) {
	g := NewWithT(t)
	inst := &v1alpha1.Instrumentation{}
	inst.Annotations = map[string]string{"team": "a"}
	inst.Spec.Java.Image = "registry.example/java:custom"
	inst.Spec.Python.Resources = corev1.ResourceRequirements{Limits: list("1", "1Gi"), Requests: list("100m", "200Mi")}
	inst.Spec.ApacheHttpd.Version = "2.2"
	inst.Spec.ApacheHttpd.ConfigPath = "/etc/httpd/conf"
	inst.Spec.Nginx.ConfigFile = "/etc/nginx/custom.conf"
	ApplyDefaults(inst, Images{NodeJS: "mirror.example/nodejs:1"})

	g.Expect(inst.Spec.Java.Image).To(Equal("registry.example/java:custom"))
	g.Expect(inst.Spec.NodeJS.Image).To(Equal("mirror.example/nodejs:1"))
	g.Expect(inst.Spec.Python.Image).To(Equal(DefaultImages().Python), "an empty flag takes upstream's default")
	g.Expect(inst.Spec.Python.Resources.Limits).To(Equal(list("1", "1Gi")))
	g.Expect(inst.Spec.Python.Resources.Requests).To(Equal(list("100m", "200Mi")))
	g.Expect(inst.Spec.ApacheHttpd.Version).To(Equal("2.2"))
	g.Expect(inst.Spec.ApacheHttpd.ConfigPath).To(Equal("/etc/httpd/conf"))
	g.Expect(inst.Spec.Nginx.ConfigFile).To(Equal("/etc/nginx/custom.conf"))
	g.Expect(inst.Annotations).To(HaveKeyWithValue("team", "a"))
	g.Expect(inst.Annotations).To(HaveKeyWithValue(Languages[0].DefaultImageAnnotation(), DefaultImages().Java),
		"the annotation records the operator's default even when the image is the user's")
	g.Expect(inst.Annotations).To(HaveKeyWithValue(Languages[1].DefaultImageAnnotation(), "mirror.example/nodejs:1"))
}

// TestDefaultResourcesKeepRequestsWithinLimits: a defaulted request never exceeds a user limit and
// a defaulted limit is never below a user request (upstream's defaults can break every pod).
func TestDefaultResourcesKeepRequestsWithinLimits(t *testing.T) {
	java := Languages[0]
	tests := []struct {
		name                   string
		in                     corev1.ResourceRequirements
		wantLimits, wantReqsts corev1.ResourceList
	}{{
		name:       "user limits below the default requests",
		in:         corev1.ResourceRequirements{Limits: list("20m", "32Mi")},
		wantLimits: list("20m", "32Mi"), wantReqsts: list("20m", "32Mi"),
	}, {
		name:       "user limits on memory only",
		in:         corev1.ResourceRequirements{Limits: list("", "1Gi")},
		wantLimits: list("", "1Gi"), wantReqsts: list("50m", "64Mi"),
	}, {
		name:       "user requests above the default limits",
		in:         corev1.ResourceRequirements{Requests: list("2", "1Gi")},
		wantLimits: list("2", "1Gi"), wantReqsts: list("2", "1Gi"),
	}, {
		name:       "user requests below the default limits",
		in:         corev1.ResourceRequirements{Requests: list("10m", "")},
		wantLimits: list("500m", "256Mi"), wantReqsts: list("10m", ""),
	}, {
		name:       "explicitly empty lists are kept (as upstream: only nil is defaulted)",
		in:         corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}},
		wantLimits: corev1.ResourceList{}, wantReqsts: corev1.ResourceList{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := tt.in
			defaultResources(&r, java)
			g.Expect(r.Limits).To(Equal(tt.wantLimits))
			g.Expect(r.Requests).To(Equal(tt.wantReqsts))
			g.Expect(validateResources(r, specPath)).To(BeEmpty())
		})
	}
}

// TestDefaultImageAnnotation covers when the annotation is stamped and when an older operator's
// default is kept for the upgrade.
func TestDefaultImageAnnotation(t *testing.T) {
	const old = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.32.0"
	cur := DefaultImages().Java
	key := Languages[0].DefaultImageAnnotation()
	tests := []struct {
		name, image, annotation string
		wantImage, wantAnnot    string
	}{
		{"new instrumentation", "", "", cur, cur},
		{"current default", cur, cur, cur, cur},
		{"older default kept for the upgrade", old, old, old, old},
		{"user image with an older annotation", "my/java:2", old, "my/java:2", cur},
		{"user image without annotation", "my/java:2", "", "my/java:2", cur},
		{"image emptied by the user", "", old, cur, cur},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			inst := &v1alpha1.Instrumentation{}
			inst.Spec.Java.Image = tt.image
			if tt.annotation != "" {
				inst.Annotations = map[string]string{key: tt.annotation}
			}
			ApplyDefaults(inst, Images{})
			g.Expect(inst.Spec.Java.Image).To(Equal(tt.wantImage))
			g.Expect(inst.Annotations).To(HaveKeyWithValue(key, tt.wantAnnot))
		})
	}
}
