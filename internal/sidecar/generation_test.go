package sidecar

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1beta1"
)

func TestGenerationRecord(t *testing.T) {
	c := v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "obs", Name: "side", Generation: 7}}
	v := FormatGeneration(c)
	if v != "obs/side@7" {
		t.Fatalf("FormatGeneration = %q", v)
	}
	key, gen, ok := ParseGeneration(v)
	if !ok || key != (types.NamespacedName{Namespace: "obs", Name: "side"}) || gen != 7 {
		t.Fatalf("ParseGeneration(%q) = %v, %d, %v", v, key, gen, ok)
	}
	for _, bad := range []string{"", "side@7", "obs/side", "obs/side@x", "/side@1", "obs/@1"} {
		if _, _, ok := ParseGeneration(bad); ok {
			t.Errorf("ParseGeneration(%q) accepted", bad)
		}
	}
}
