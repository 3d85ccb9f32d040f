package managertest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var namespaces atomic.Int32

// NewNamespace creates a namespace named prefix-N (N counts the namespaces this test binary
// created) and returns its name.
func NewNamespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, namespaces.Add(1))
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// Get reads ns/name into obj and returns it; g fails when it cannot.
func Get[T client.Object](g gomega.Gomega, c client.Client, ns, name string, obj T) T {
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)).To(gomega.Succeed())
	return obj
}

// ExpectController fails g unless owner, of kind, is obj's controller.
func ExpectController(g gomega.Gomega, obj, owner client.Object, kind string) {
	ref := metav1.GetControllerOf(obj)
	g.Expect(ref).NotTo(gomega.BeNil(), obj.GetName())
	g.Expect(ref.UID).To(gomega.Equal(owner.GetUID()))
	g.Expect(ref.Kind).To(gomega.Equal(kind))
}
