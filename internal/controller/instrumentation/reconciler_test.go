package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

func TestOptIn(t *testing.T) {
	with := func(ann map[string]string) *v1alpha1.Instrumentation {
		return &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Namespace: "obs", Annotations: ann}}
	}
	own := &Workload{Namespace: "obs"}
	foreign := &Workload{Namespace: "apps"}
	foreignOptedIn := &Workload{Namespace: "apps", OptIn: true}
	yes := map[string]string{RestartOptInAnnotation: "true"}
	cases := []struct {
		name       string
		restartAll bool
		w          *Workload
		in         *v1alpha1.Instrumentation
		want       bool
	}{
		{"nothing set", false, own, with(nil), false},
		{"annotation true", false, own, with(map[string]string{RestartOptInAnnotation: "true"}), true},
		{"annotation True", false, own, with(map[string]string{RestartOptInAnnotation: " True "}), true},
		{"flag", true, own, with(nil), true},
		{"flag, annotation false", true, own, with(map[string]string{RestartOptInAnnotation: "false"}), false},
		{"flag, annotation garbage", true, own, with(map[string]string{RestartOptInAnnotation: "yes please"}), true},
		{"annotation garbage", false, own, with(map[string]string{RestartOptInAnnotation: "yes please"}), false},
		{"no Instrumentation", true, own, nil, false},
		// Another namespace's workload (a consented cross-namespace reference) also needs its own opt-in.
		{"other namespace, Instrumentation opted in", false, foreign, with(yes), false},
		{"other namespace, flag", true, foreign, with(nil), false},
		{"other namespace, both opted in", false, foreignOptedIn, with(yes), true},
		{"other namespace, workload opted in, flag", true, foreignOptedIn, with(nil), true},
		{"other namespace, workload opted in only", false, foreignOptedIn, with(nil), false},
		{"other namespace, workload opted in, Instrumentation false", true, foreignOptedIn, with(map[string]string{RestartOptInAnnotation: "false"}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reconciler{RestartAll: c.restartAll}
			NewWithT(t).Expect(r.optIn(c.w, c.in)).To(Equal(c.want))
		})
	}
}
