package collector

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1beta1"
)

// TestScaleSelectorIsThePodTemplatesLabels: status.scale.selector selects every label of the pod
// template (CR labels, name, version and the selector labels), as upstream's does, not only the
// workload's selector labels: a takeover leaves the selector users and HPAs see unchanged.
func TestScaleSelectorIsThePodTemplatesLabels(t *testing.T) {
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: 1}}
	sel := map[string]string{
		"app.kubernetes.io/component":  "opentelemetry-collector",
		"app.kubernetes.io/instance":   "ns.c",
		"app.kubernetes.io/managed-by": "opentelemetry-operator",
		"app.kubernetes.io/part-of":    "opentelemetry",
	}
	podLabels := map[string]string{"team": "checkout", "app.kubernetes.io/name": "c-collector", "app.kubernetes.io/version": "latest"}
	for k, v := range sel {
		podLabels[k] = v
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "c-collector", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	dep.Spec.Template.Labels = podLabels
	dep.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	st := computeStatus(col, nil, dep, "0.1", nil, nil)
	want := "app.kubernetes.io/component=opentelemetry-collector,app.kubernetes.io/instance=ns.c," +
		"app.kubernetes.io/managed-by=opentelemetry-operator,app.kubernetes.io/name=c-collector," +
		"app.kubernetes.io/part-of=opentelemetry,app.kubernetes.io/version=latest,team=checkout"
	if st.Scale.Selector != want {
		t.Errorf("scale.selector\n got %q\nwant %q", st.Scale.Selector, want)
	}
}
