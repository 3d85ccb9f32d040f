package apply_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/apply"
)

func obj(kind, name string) client.Object {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	o.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return o
}

func TestStaleIsWhatIsNotDesiredInAStableOrder(t *testing.T) {
	g := NewWithT(t)
	existing := apply.Objects{}
	for _, o := range []client.Object{obj("Service", "b"), obj("ConfigMap", "z"), obj("Service", "a"), obj("ConfigMap", "keep")} {
		existing[apply.KeyOf(o)] = o
	}
	stale := apply.Stale([]client.Object{obj("ConfigMap", "keep")}, existing)
	var names []string
	for _, o := range stale {
		names = append(names, apply.KeyOf(o).GVK.Kind+"/"+o.GetName())
	}
	g.Expect(names).To(Equal([]string{"ConfigMap/z", "Service/a", "Service/b"}))
	g.Expect(apply.Stale(nil, nil)).To(BeEmpty())
}
