package controller

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// A source name may have 253 characters, a label value 63: the copy's labels stay valid, distinct
// long names stay distinct, and the annotation keeps the full name.
func TestCopyLabelsFitLongSourceNames(t *testing.T) {
	g := NewWithT(t)
	long := strings.Repeat("registry-credentials.", 11) + "a"
	other := strings.Repeat("registry-credentials.", 11) + "b"
	for _, name := range []string{"regcred", long} {
		c := secretCopy(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, name, "ns", "id")
		for k, v := range c.Labels {
			g.Expect(validation.IsValidLabelValue(v)).To(BeEmpty(), "label %s=%s", k, v)
		}
		g.Expect(c.Annotations).To(HaveKeyWithValue(instance.SourceAnnotation, name))
	}
	g.Expect(instance.SourceLabelValue("regcred")).To(Equal("regcred"))
	g.Expect(instance.SourceLabelValue(long)).NotTo(Equal(instance.SourceLabelValue(other)))
}
