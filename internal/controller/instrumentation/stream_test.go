package instrumentation

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/otelop/otelop/api/v1alpha1"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// TestDecodeList: a list page is decoded item by item into the scan's views, whatever the order of
// its fields; what the scan does not read is dropped.
func TestDecodeList(t *testing.T) {
	g := NewWithT(t)
	page := `{"kind":"DeploymentList","apiVersion":"apps/v1","items":[` +
		`{"metadata":{"name":"a","namespace":"apps","uid":"u1","generation":2,"annotations":{"x":"y"},"managedFields":[{"manager":"m"}]},` +
		`"spec":{"replicas":3,"paused":true,"template":{"metadata":{"annotations":{"instrumentation.opentelemetry.io/inject-java":"true"}},` +
		`"spec":{"containers":[{"name":"app","image":"i","env":[{"name":"BIG","value":"` + strings.Repeat("x", 1000) + `"}]}]}}},` +
		`"status":{"observedGeneration":2,"replicas":3,"updatedReplicas":3}},` +
		`{"metadata":{"name":"b","namespace":"apps"},"spec":{}}` +
		`],"metadata":{"resourceVersion":"7","continue":"next-page"}}`
	var got []*slimDeployment
	cont, err := decodeList(strings.NewReader(page), func(d *slimDeployment) { got = append(got, d) })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cont).To(Equal("next-page"))
	g.Expect(got).To(HaveLen(2))
	d := got[0].object()
	g.Expect(d.Name).To(Equal("a"))
	g.Expect(d.UID).To(BeEquivalentTo("u1"))
	g.Expect(d.Generation).To(Equal(int64(2)))
	g.Expect(d.Annotations).To(Equal(map[string]string{"x": "y"}))
	g.Expect(d.ManagedFields).To(BeEmpty())
	g.Expect(*d.Spec.Replicas).To(Equal(int32(3)))
	g.Expect(d.Spec.Paused).To(BeTrue())
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("instrumentation.opentelemetry.io/inject-java", "true"))
	g.Expect(d.Spec.Template.Spec.Containers).To(BeEmpty(), "the pod spec is not kept")
	g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(3)))

	cont, err = decodeList(strings.NewReader(`{"metadata":{},"items":null}`), func(*slimDeployment) { t.Fatal("no item") })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cont).To(BeEmpty())
	for _, bad := range []string{`[]`, `{"items":{}}`, `{"items":[{"metadata":`} {
		_, err = decodeList(strings.NewReader(bad), func(*slimDeployment) {})
		g.Expect(err).To(HaveOccurred(), bad)
	}
}

// TestScanInput: only what the scan reads of an Instrumentation tells two versions apart.
func TestScanInput(t *testing.T) {
	g := NewWithT(t)
	r := &Reconciler{}
	base := &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Generation: 1, Labels: map[string]string{"team": "a"},
		Annotations: map[string]string{"other": "1"}}}
	same := base.DeepCopy()
	same.Annotations["other"] = "2"
	same.Labels["other"] = "x"
	same.Status.Workloads = &v1alpha1.InstrumentationWorkloads{Pending: 3}
	g.Expect(r.scanInput(same)).To(Equal(r.scanInput(base)), "other annotations, labels, status")
	for name, change := range map[string]func(*v1alpha1.Instrumentation){
		"spec":     func(in *v1alpha1.Instrumentation) { in.Generation = 2 },
		"allowed":  func(in *v1alpha1.Instrumentation) { in.Annotations[inst.AllowedNamespacesAnnotation] = "b" },
		"opt-in":   func(in *v1alpha1.Instrumentation) { in.Annotations[RestartOptInAnnotation] = "true" },
		"deletion": func(in *v1alpha1.Instrumentation) { in.DeletionTimestamp = &metav1.Time{} },
	} {
		changed := base.DeepCopy()
		change(changed)
		g.Expect(r.scanInput(changed)).NotTo(Equal(r.scanInput(base)), name)
	}
	sharded := &Reconciler{Shard: labels.SelectorFromSet(labels.Set{"team": "a"})}
	moved := base.DeepCopy()
	moved.Labels["team"] = "b"
	g.Expect(sharded.scanInput(moved)).NotTo(Equal(sharded.scanInput(base)), "leaving the shard")
	g.Expect(r.scanInput(moved)).To(Equal(r.scanInput(base)), "without a shard, labels do not matter")
}
