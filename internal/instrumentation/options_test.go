package instrumentation

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

func TestParseContainerNames(t *testing.T) {
	g := NewWithT(t)
	got, err := ParseContainerNames("k", "a,b-1,,C")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal([]string{"a", "b-1", "C"}))
	got, err = ParseContainerNames("k", "  ")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeEmpty())
	for _, bad := range []string{"a b", "a.b", "a_b", "a;b", "ä"} {
		_, err := ParseContainerNames("k", bad)
		g.Expect(err).To(MatchError(ContainSubstring(`k="`)), bad)
	}
	g.Expect(ContainerNamesAnnotationOf(Nginx)).To(Equal("instrumentation.opentelemetry.io/inject-nginx-container-names"))
	g.Expect(ContainerNamesAnnotationOf(ApacheHttpd)).To(Equal("instrumentation.opentelemetry.io/apache-httpd-container-names"))
	g.Expect(DefaultOptions().Enabled(Go)).To(BeFalse())
	g.Expect(DefaultOptions().Enabled(Nginx)).To(BeFalse())
	g.Expect(Options{Disabled: map[Language]bool{SDK: true}}.Enabled(SDK)).To(BeTrue(), "sdk cannot be disabled")
}

func TestImageVersion(t *testing.T) {
	g := NewWithT(t)
	for image, want := range map[string]string{
		"nginx":                            "",
		"nginx:1.27":                       "1.27",
		"registry:5000/team/app":           "",
		"registry:5000/team/app:v2":        "v2",
		"app@sha256:abc":                   "sha256:abc",
		"registry:5000/app:v3@sha256:abc":  "v3@sha256:abc",
		"localhost:5000/app@sha256:abc123": "sha256:abc123",
	} {
		g.Expect(imageVersion(image)).To(Equal(want), image)
	}
}

// FuzzInjectAnnotations feeds arbitrary container-names values (common and per language) and
// checks that Inject never panics, never modifies its input, keeps every original container,
// and only instruments containers the pod has.
func FuzzInjectAnnotations(f *testing.F) {
	f.Add("app", "worker", "", true)
	f.Add("app,worker", "worker", "app", false)
	f.Add(",,", "ghost", "app;x", true)
	f.Add("", "", "", true)
	f.Fuzz(func(t *testing.T, common, java, python string, multi bool) {
		pod := appPod(corev1.Container{Name: "app", Image: "a:1"}, corev1.Container{Name: "worker", Image: "w:1"})
		pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "i:1"}}
		pod.Annotations = map[string]string{
			ContainerNamesAnnotation:           common,
			ContainerNamesAnnotationOf(Java):   java,
			ContainerNamesAnnotationOf(Python): python,
		}
		before := pod.DeepCopy()
		opts := DefaultOptions()
		opts.MultiInstrumentation = multi
		res := Inject(Input{
			Pod: pod, Namespace: metav1.ObjectMeta{Name: "apps"}, Owners: deploymentOwners, Options: opts,
			Instrumentations: map[Language]*v1alpha1.Instrumentation{Java: fullInstrumentation(), Python: fullInstrumentation()},
		})
		if !equality.Semantic.DeepEqual(before, pod) {
			t.Fatal("input modified")
		}
		names := map[string]bool{}
		for _, c := range res.Pod.Spec.Containers {
			names[c.Name] = true
		}
		for _, c := range before.Spec.Containers {
			if !names[c.Name] {
				t.Fatalf("container %s lost", c.Name)
			}
		}
		for _, c := range res.Pod.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if strings.HasPrefix(m.MountPath, "/otel-auto-instrumentation-java-") && m.MountPath != "/otel-auto-instrumentation-java-"+c.Name {
					t.Fatalf("container %s mounts %s", c.Name, m.MountPath)
				}
			}
		}
		if !res.Changed() && len(res.Warnings) == 0 {
			t.Fatal("nothing injected and no warning says why")
		}
	})
}
