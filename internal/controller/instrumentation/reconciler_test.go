package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

func TestOptIn(t *testing.T) {
	with := func(ann map[string]string) *v1alpha1.Instrumentation {
		return &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	}
	cases := []struct {
		name       string
		restartAll bool
		in         *v1alpha1.Instrumentation
		want       bool
	}{
		{"nothing set", false, with(nil), false},
		{"annotation true", false, with(map[string]string{RestartOptInAnnotation: "true"}), true},
		{"annotation True", false, with(map[string]string{RestartOptInAnnotation: " True "}), true},
		{"flag", true, with(nil), true},
		{"flag, annotation false", true, with(map[string]string{RestartOptInAnnotation: "false"}), false},
		{"flag, annotation garbage", true, with(map[string]string{RestartOptInAnnotation: "yes please"}), true},
		{"annotation garbage", false, with(map[string]string{RestartOptInAnnotation: "yes please"}), false},
		{"no Instrumentation", true, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reconciler{RestartAll: c.restartAll}
			NewWithT(t).Expect(r.optIn(c.in)).To(Equal(c.want))
		})
	}
}
