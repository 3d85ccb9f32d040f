package instrumentation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1alpha1"
)

// FuzzValidate feeds arbitrary sampler and TLS settings to the defaulter and the validator: they
// never panic, every error has a field path under spec, defaulting is idempotent, and the
// defaulter alone never produces an invalid resources block.
func FuzzValidate(f *testing.F) {
	f.Add("parentbased_traceidratio", "0.25", "https://c:4318", "s", "", "ca.crt", "tls.crt", "tls.key", "64Mi")
	f.Add("jaeger_remote", "endpoint=http://j:14250,pollingIntervalMs=5000,initialSamplingRate=0.5", "", "", "cm", "ca.crt", "", "", "")
	f.Add("traceidratio", "1e400", "http://c", "Bad_Name", "", "/abs/ca", "x/y", "", "-1")
	f.Add("", "=,=,,", "", "", "", "", "", "", "0")
	f.Fuzz(func(t *testing.T, typ, arg, endpoint, secret, cm, ca, cert, key, size string) {
		inst := &v1alpha1.Instrumentation{}
		inst.Spec.Sampler = v1alpha1.Sampler{Type: v1alpha1.SamplerType(typ), Argument: arg}
		inst.Spec.Exporter.Endpoint = endpoint
		if secret+cm+ca+cert+key != "" {
			inst.Spec.Exporter.TLS = &v1alpha1.TLS{SecretName: secret, ConfigMapName: cm, CA: ca, Cert: cert, Key: key}
		}
		if q, err := resource.ParseQuantity(size); err == nil {
			inst.Spec.Java.VolumeSizeLimit = &q
			inst.Spec.Java.Resources.Limits = list("", size)
		}
		ApplyDefaults(inst, Images{})
		again := inst.DeepCopy()
		ApplyDefaults(again, Images{})
		if again.Spec.Java.Image != inst.Spec.Java.Image || len(again.Annotations) != len(inst.Annotations) {
			t.Fatalf("defaulting is not idempotent")
		}
		errs, _ := Validate(inst)
		for _, e := range errs {
			if !strings.HasPrefix(e.Field, "spec.") {
				t.Fatalf("error without a spec path: %v", e)
			}
			if strings.HasSuffix(e.Field, ".requests[memory]") || strings.HasSuffix(e.Field, ".requests[cpu]") {
				t.Fatalf("defaulted resources are inconsistent: %v", e)
			}
		}
	})
}
