package collector

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

// invalidStored is a collector that today's validation rejects (a sidecar with tolerations), as an
// older or upstream operator may have stored it, with the operator's finalizer.
func invalidStored(t *testing.T) *v1beta1.OpenTelemetryCollector {
	c := collector(t, otlpDebug, func(s *v1beta1.OpenTelemetryCollectorSpec) {
		s.Mode = v1beta1.ModeSidecar
		s.Tolerations = []corev1.Toleration{{Key: "a"}}
	})
	c.Finalizers = []string{"opentelemetrycollector.opentelemetry.io/finalizer"}
	return c
}

func TestFinalizerRemovalOfInvalidCollectorIsAllowed(t *testing.T) {
	g := NewWithT(t)
	w := New(Options{Manifests: mcollector.DefaultOptions()})
	old := invalidStored(t)
	_, err := w.ValidateCreate(context.Background(), old)
	g.Expect(err).To(HaveOccurred(), "the stored collector is invalid by today's rules")

	// Deleting: the operator removes its finalizer.
	now := metav1.Now()
	old.DeletionTimestamp = &now
	cur := old.DeepCopy()
	cur.Finalizers = nil
	g.Expect(w.Default(context.Background(), cur)).To(Succeed())
	g.Expect(cur.Spec).To(Equal(old.Spec), "no defaulting while deleting")
	_, err = w.ValidateUpdate(context.Background(), old, cur)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestMetadataOnlyUpdateOfInvalidCollectorIsAllowed(t *testing.T) {
	g := NewWithT(t)
	w := New(Options{Manifests: mcollector.DefaultOptions()})
	old := invalidStored(t)
	cur := old.DeepCopy()
	cur.Finalizers = nil
	cur.Labels = map[string]string{"team": "a"}
	_, err := w.ValidateUpdate(context.Background(), old, cur)
	g.Expect(err).NotTo(HaveOccurred())

	// A spec change is still validated in full.
	cur.Spec.Replicas = new(int32)
	_, err = w.ValidateUpdate(context.Background(), old, cur)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("spec.tolerations"))
}

func TestVolumeClaimTemplatesChangeWarns(t *testing.T) {
	g := NewWithT(t)
	sts := func(s *v1beta1.OpenTelemetryCollectorSpec) { s.Mode = v1beta1.ModeStatefulSet }
	old := collector(t, otlpDebug, sts)
	cur := old.DeepCopy()
	cur.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	_, warnings := Validate(cur, old, ValidateOptions{Manifests: mcollector.DefaultOptions()})
	g.Expect(warnings).To(ContainElement(ContainSubstring("spec.volumeClaimTemplates")))

	_, warnings = Validate(old.DeepCopy(), old, ValidateOptions{Manifests: mcollector.DefaultOptions()})
	g.Expect(warnings).NotTo(ContainElement(ContainSubstring("spec.volumeClaimTemplates")))
	_, warnings = Validate(cur, nil, ValidateOptions{Manifests: mcollector.DefaultOptions()})
	g.Expect(warnings).NotTo(ContainElement(ContainSubstring("spec.volumeClaimTemplates")), "not on create")
}

// panicReviewer stands for a SubjectAccessReview client that must not be called.
type panicReviewer struct{ client.Client }

func (panicReviewer) Create(context.Context, client.Object, ...client.CreateOption) error {
	panic("no SubjectAccessReview may be sent")
}

// A config listing many objects (k8sobjects) is refused before the webhook sends one
// SubjectAccessReview per permission.
func TestPrivilegeCheckIsBounded(t *testing.T) {
	g := NewWithT(t)
	var objects []string
	for i := range maxReviews + 1 {
		objects = append(objects, fmt.Sprintf(`{"name":"res%d","mode":"pull"}`, i))
	}
	cfg := `{"receivers":{"k8sobjects":{"objects":[` + strings.Join(objects, ",") + `]}},"exporters":{"debug":{}},
"service":{"pipelines":{"logs":{"receivers":["k8sobjects"],"exporters":["debug"]}}}}`
	c := collector(t, cfg, func(s *v1beta1.OpenTelemetryCollectorSpec) { s.Mode = v1beta1.ModeDeployment })
	opts := mcollector.DefaultOptions()
	opts.CreateRBAC = true
	w := New(Options{Manifests: opts, Reviewer: panicReviewer{}})
	ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: "tenant"},
	}})
	_, err := w.ValidateCreate(ctx, c)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("spec.config"))
	g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("at most %d are checked", maxReviews)))
}
