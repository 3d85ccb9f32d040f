package podmutation_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// BenchmarkHandle measures the handler alone (decode, decisions, injection, JSON patch), wired as
// Setup wires it: namespaces, collectors and Instrumentations from the manager's caches. The
// Java case reads the pod's ReplicaSet from the API server (one uncached metadata GET).
//
//	go test ./internal/webhook/podmutation -run XXX -bench Handle -benchmem
func BenchmarkHandle(b *testing.B) {
	ns := newNamespace(b, "bench-handle", nil)
	newCollector(b, ns, "agent", v1beta1.ModeSidecar)
	newInstrumentation(b, ns, "otel")
	rs := replicaSetOfDeployment(b, ns, "shop")
	inst := instrumentation.DefaultOptions()
	h, err := podmutation.New(podmutation.Options{
		Manifests: manifests, Collectors: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Namespaces: mgr.GetCache(), Instrumentation: &inst,
	}, admission.NewDecoder(scheme))
	if err != nil {
		b.Fatal(err)
	}
	javaPod := newPod(ns, "java", map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "true"})
	javaPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
	cases := []struct {
		name string
		req  admission.Request
	}{
		{"no-annotation", request(b, newPod(ns, "plain", nil))},
		{"sidecar", request(b, newPod(ns, "sidecar", map[string]string{podmutation.Annotation: "true"}))},
		{"java-replicaset-owner", request(b, javaPod)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if resp := h.Handle(ctx, c.req); !resp.Allowed || len(resp.Warnings) > 0 {
					b.Fatalf("%+v", resp)
				}
			}
		})
	}
}
