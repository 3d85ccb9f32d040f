package instrumentation

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1alpha1"
)

// valid is a defaulted Instrumentation that passes without warnings.
func valid() *v1alpha1.Instrumentation {
	inst := &v1alpha1.Instrumentation{}
	inst.Name, inst.Namespace = "my-instrumentation", "apps"
	inst.Spec.Exporter.Endpoint = "http://otel-collector:4318"
	inst.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.ParentBasedTraceIDRatio, Argument: "0.25"}
	ApplyDefaults(inst, Images{})
	return inst
}

func errorFields(inst *v1alpha1.Instrumentation) ([]string, []string) {
	errs, warnings := Validate(inst)
	fields := make([]string, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	return fields, warnings
}

func TestValidate(t *testing.T) {
	qty := resource.MustParse("200Mi")
	neg := resource.MustParse("-1Mi")
	claim := corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}
	tests := []struct {
		name     string
		mutate   func(*v1alpha1.Instrumentation)
		fields   []string // error paths, in order
		warnings []string // substrings, one per warning, in order
	}{
		{name: "valid", mutate: func(*v1alpha1.Instrumentation) {}},

		// Sampler.
		{name: "no sampler warns", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler = v1alpha1.Sampler{} },
			warnings: []string{"spec.sampler.type is not set"}},
		{name: "argument without type warns", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler = v1alpha1.Sampler{Argument: "0.5"} },
			warnings: []string{"argument is set but type is not"}},
		{name: "unknown type", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Type = "sometimes" },
			fields: []string{"spec.sampler.type"}},
		{name: "ratio 1", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.TraceIDRatio, Argument: "1"}
		}},
		{name: "ratio 0", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "0" }},
		{name: "ratio .5e-1", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = ".5e-1" }},
		{name: "ratio empty takes the SDK default", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "" }},
		{name: "ratio above 1", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "1.5" },
			fields: []string{"spec.sampler.argument"}},
		{name: "ratio negative", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "-0.1" },
			fields: []string{"spec.sampler.argument"}},
		{name: "ratio not a number", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "half" },
			fields: []string{"spec.sampler.argument"}},
		{name: "ratio NaN", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "NaN" },
			fields: []string{"spec.sampler.argument"}},
		{name: "ratio hexadecimal", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Sampler.Argument = "0x1p-2" },
			fields: []string{"spec.sampler.argument"}},
		{name: "jaeger remote full", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.JaegerRemote, Argument: "endpoint=http://jaeger:14250,pollingIntervalMs=5000,initialSamplingRate=0.25"}
		}},
		{name: "parentbased jaeger remote without argument", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.ParentBasedJaegerRemote}
		}},
		{name: "jaeger remote every bad key at once", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.ParentBasedJaegerRemote, Argument: "endpoint=,pollingIntervalMs=soon,initialSamplingRate=2,rate"}
		}, fields: []string{"spec.sampler.argument", "spec.sampler.argument", "spec.sampler.argument", "spec.sampler.argument"}},
		{name: "jaeger remote non-positive interval", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.JaegerRemote, Argument: "pollingIntervalMs=0"}
		}, fields: []string{"spec.sampler.argument"}},
		{name: "jaeger remote unknown key warns", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.JaegerRemote, Argument: "endpoint=http://jaeger:14250,timeout=5"}
		}, warnings: []string{`unknown key "timeout"`}},
		{name: "xray argument passes", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.XRaySampler, Argument: "anything"}
		}},
		{name: "always_on argument warns", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.AlwaysOn, Argument: "1"}
		}, warnings: []string{"takes no argument"}},

		// Volumes, every language.
		{name: "claim and size limit on every language", mutate: func(i *v1alpha1.Instrumentation) {
			s := &i.Spec
			s.Java.VolumeClaimTemplate, s.Java.VolumeSizeLimit = claim, &qty
			s.NodeJS.VolumeClaimTemplate, s.NodeJS.VolumeSizeLimit = claim, &qty
			s.Python.VolumeClaimTemplate, s.Python.VolumeSizeLimit = claim, &qty
			s.DotNet.VolumeClaimTemplate, s.DotNet.VolumeSizeLimit = claim, &qty
			s.Go.VolumeClaimTemplate, s.Go.VolumeSizeLimit = claim, &qty
			s.ApacheHttpd.VolumeClaimTemplate, s.ApacheHttpd.VolumeSizeLimit = claim, &qty
			s.Nginx.VolumeClaimTemplate, s.Nginx.VolumeSizeLimit = claim, &qty
		}, fields: []string{"spec.java.volumeLimitSize", "spec.nodejs.volumeLimitSize", "spec.python.volumeLimitSize",
			"spec.dotnet.volumeLimitSize", "spec.go.volumeLimitSize", "spec.apacheHttpd.volumeLimitSize", "spec.nginx.volumeLimitSize"}},
		{name: "claim alone", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Python.VolumeClaimTemplate = claim }},
		{name: "size limit alone", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Python.VolumeSizeLimit = &qty }},
		{name: "negative size limit", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.DotNet.VolumeSizeLimit = &neg },
			fields: []string{"spec.dotnet.volumeLimitSize"}},

		// Resources and env.
		{name: "request above limit", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Java.Resources.Requests = list("1", "64Mi")
			i.Spec.NodeJS.Resources.Requests = list("50m", "1Gi")
		}, fields: []string{"spec.java.resources.requests[cpu]", "spec.nodejs.resourceRequirements.requests[memory]"}},
		{name: "env problems", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Env = []corev1.EnvVar{{Name: ""}, {Name: "A=B"}}
			i.Spec.Go.Env = []corev1.EnvVar{{Name: "X", Value: "1", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		}, fields: []string{"spec.env[0].name", "spec.env[1].name", "spec.go.env[0].valueFrom"}},
		{name: "nginx attr without name", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Nginx.Attrs = []corev1.EnvVar{{Value: "x"}}
		}, fields: []string{"spec.nginx.attrs[0].name"}},
		{name: "java extension without image and dir", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Java.Extensions = []v1alpha1.Extensions{{Image: "ext:1", Dir: "/ext"}, {}}
		}, fields: []string{"spec.java.extensions[1].image", "spec.java.extensions[1].dir"}},
		{name: "unknown pull policy", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.ImagePullPolicy = "Sometimes" },
			fields: []string{"spec.imagePullPolicy"}},
		{name: "unknown apache version warns", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.ApacheHttpd.Version = "3.0" },
			warnings: []string{"spec.apacheHttpd.version"}},

		// Exporter.
		{name: "https without tls warns", mutate: func(i *v1alpha1.Instrumentation) { i.Spec.Exporter.Endpoint = "https://collector:4318" },
			warnings: []string{"uses https:// but spec.exporter.tls is not set"}},
		{name: "tls complete", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Exporter = v1alpha1.Exporter{Endpoint: "https://collector:4318", TLS: &v1alpha1.TLS{
				SecretName: "client-certs", ConfigMapName: "ca-bundle", CA: "ca.crt", Cert: "tls.crt", Key: "tls.key"}}
		}},
		{name: "tls with absolute paths needs no object", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Exporter = v1alpha1.Exporter{Endpoint: "https://collector:4318", TLS: &v1alpha1.TLS{
				CA: "/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt", Cert: "/certs/tls.crt", Key: "/certs/tls.key"}}
		}},
		{name: "tls warnings as upstream", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Exporter.TLS = &v1alpha1.TLS{SecretName: "client-certs", Cert: "tls.crt"}
		}, warnings: []string{"does not start with https://", "cert_file and key_file should be set together"}},
		{name: "tls relative files without their objects", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Exporter = v1alpha1.Exporter{Endpoint: "https://collector:4318", TLS: &v1alpha1.TLS{CA: "ca.crt", Cert: "tls.crt", Key: "tls.key"}}
		}, fields: []string{"spec.exporter.tls.ca_file", "spec.exporter.tls.cert_file", "spec.exporter.tls.key_file"}},
		{name: "tls CA from the config map alone", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Exporter = v1alpha1.Exporter{Endpoint: "https://collector:4318", TLS: &v1alpha1.TLS{ConfigMapName: "ca-bundle", CA: "ca.crt"}}
		}},
		{name: "tls bad names and keys", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Exporter = v1alpha1.Exporter{Endpoint: "https://collector:4318", TLS: &v1alpha1.TLS{
				SecretName: "Client_Certs", ConfigMapName: "ca bundle", CA: "certs/ca.crt", Cert: "tls.crt", Key: "tls.key"}}
		}, fields: []string{"spec.exporter.tls.secretName", "spec.exporter.tls.configMapName", "spec.exporter.tls.ca_file"}},

		// Everything at once.
		{name: "all problems in one answer", mutate: func(i *v1alpha1.Instrumentation) {
			i.Spec.Sampler.Argument = "2"
			i.Spec.Java.VolumeClaimTemplate, i.Spec.Java.VolumeSizeLimit = claim, &qty
			i.Spec.Exporter.TLS = &v1alpha1.TLS{Cert: "tls.crt", Key: "tls.key"}
		}, fields: []string{"spec.sampler.argument", "spec.exporter.tls.cert_file", "spec.exporter.tls.key_file", "spec.java.volumeLimitSize"},
			warnings: []string{"does not start with https://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			inst := valid()
			tt.mutate(inst)
			fields, warnings := errorFields(inst)
			if tt.fields == nil {
				tt.fields = []string{}
			}
			g.Expect(fields).To(Equal(tt.fields))
			g.Expect(warnings).To(HaveLen(len(tt.warnings)), "warnings: %q", warnings)
			for i, w := range tt.warnings {
				g.Expect(warnings[i]).To(ContainSubstring(w))
			}
		})
	}
}

// TestValidateMessagesSayWhatIsAllowed: errors name the field and what is allowed.
func TestValidateMessagesSayWhatIsAllowed(t *testing.T) {
	g := NewWithT(t)
	inst := valid()
	inst.Spec.Sampler = v1alpha1.Sampler{Type: "sometimes"}
	errs, _ := Validate(inst)
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Error()).To(And(ContainSubstring("spec.sampler.type"), ContainSubstring("parentbased_traceidratio")))

	inst = valid()
	inst.Spec.Sampler.Argument = "1.5"
	errs, _ = Validate(inst)
	g.Expect(errs.ToAggregate().Error()).To(ContainSubstring("between 0 and 1"))

	inst = valid()
	inst.Spec.Exporter.TLS = &v1alpha1.TLS{Cert: "tls.crt", Key: "tls.key"}
	errs, _ = Validate(inst)
	g.Expect(strings.Count(errs.ToAggregate().Error(), "secretName")).To(Equal(2))
}
