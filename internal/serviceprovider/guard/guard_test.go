package guard

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestMessage(t *testing.T) {
	tests := []struct {
		name      string
		remaining []string
		max       int
		want      string
	}{
		{"one", []string{"Instrumentation a/b"}, 5, "waiting for 1 opentelemetry.io object(s) in the control plane to be deleted: Instrumentation a/b"},
		{"truncated", []string{"A x/1", "B x/2", "C x/3"}, 2, "waiting for 3 opentelemetry.io object(s) in the control plane to be deleted: A x/1, B x/2 and 1 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Message(tt.remaining, tt.max)).To(Equal(tt.want))
		})
	}
}

func TestBlockingKindsCoverEveryUserKind(t *testing.T) {
	g := NewWithT(t)
	kinds := map[string]bool{}
	for _, k := range BlockingKinds {
		g.Expect(k.Group).To(Equal("opentelemetry.io"))
		kinds[k.Version+"/"+k.Kind] = true
	}
	for _, k := range []string{"v1alpha1/OpenTelemetryCollector", "v1beta1/OpenTelemetryCollector", "v1alpha1/Instrumentation", "v1alpha1/OpAMPBridge", "v1alpha1/TargetAllocator"} {
		g.Expect(kinds).To(HaveKey(k))
	}
}
