package podmutation

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
)

func TestTarget(t *testing.T) {
	g := NewWithT(t)
	got, err := Target("agent", "apps")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(types.NamespacedName{Namespace: "apps", Name: "agent"}))
	got, err = Target("obs/agent", "apps")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(types.NamespacedName{Namespace: "obs", Name: "agent"}))
	for _, bad := range []string{"/agent", "obs/", "a/b/c"} {
		_, err := Target(bad, "apps")
		g.Expect(err).To(MatchError(ContainSubstring(Annotation)), bad)
	}
}

func sidecarCollector() v1beta1.OpenTelemetryCollector {
	c := v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "agent"}}
	c.Spec.Mode = v1beta1.ModeSidecar
	c.Spec.Image = "collector:1"
	c.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	c.Spec.Volumes = []corev1.Volume{{Name: "data"}, {Name: "scratch"}}
	c.Spec.ConfigMaps = []v1beta1.ConfigMapsSpec{{Name: "extra", MountPath: "extra"}}
	return c
}

// TestInjectKeepsThePodValid: names the pod already uses are not added twice, and a warning
// says which were skipped.
func TestInjectKeepsThePodValid(t *testing.T) {
	g := NewWithT(t)
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "init"}},
		Volumes:    []corev1.Volume{{Name: "data"}},
	}}
	warnings, err := Inject(pod, sidecarCollector(), collector.DefaultOptions(), sidecar.Owners{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(ConsistOf(
		ContainSubstring(`init container "init" of collector apps/agent not added`),
		ContainSubstring(`volume "data" of collector apps/agent not added`),
	))
	g.Expect(pod.Spec.InitContainers).To(BeEmpty())
	g.Expect(pod.Spec.Containers).To(HaveLen(2))
	g.Expect(pod.Spec.Containers[1].Name).To(Equal(naming.Container))
	g.Expect(volumeNames(pod.Spec.Volumes)).To(Equal([]string{"data", naming.ConfigMapVolume, "scratch", naming.ConfigMapExtra("extra")}))
	g.Expect(HasSidecar(pod)).To(BeTrue())
}

// TestInjectRefusesAPodWithTheConfigVolumeName: the sidecar would mount the pod's own volume as
// its config, so it is not injected at all.
func TestInjectRefusesAPodWithTheConfigVolumeName(t *testing.T) {
	g := NewWithT(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app"}},
			Volumes:    []corev1.Volume{{Name: naming.ConfigMapVolume}},
		},
	}
	before := pod.DeepCopy()
	_, err := Inject(pod, sidecarCollector(), collector.DefaultOptions(), sidecar.Owners{})
	g.Expect(err).To(MatchError(ContainSubstring(`already has a volume named "otc-internal"`)))
	g.Expect(pod).To(Equal(before))

	// Positive control: without the clash the same pod gets the sidecar and the volume.
	pod.Spec.Volumes = nil
	_, err = Inject(pod, sidecarCollector(), collector.DefaultOptions(), sidecar.Owners{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(HasSidecar(pod)).To(BeTrue())
	g.Expect(volumeNames(pod.Spec.Volumes)).To(ContainElement(naming.ConfigMapVolume))
}

func volumeNames(vs []corev1.Volume) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

func TestRemove(t *testing.T) {
	g := NewWithT(t)
	native := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{sidecar.InjectedLabel: "apps.agent"},
				Annotations: map[string]string{sidecar.GenerationAnnotation: "apps/agent@3"}},
			Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: naming.Container, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
				Containers:     []corev1.Container{{Name: "app"}},
			},
		}
	}
	pod := native()
	g.Expect(Remove(pod, true)).To(BeTrue())
	g.Expect(pod.Spec.InitContainers).To(BeEmpty())
	g.Expect(pod.Labels).To(BeEmpty())
	g.Expect(pod.Annotations).To(BeEmpty(), "the generation record goes with the sidecar")

	pod = native()
	g.Expect(Remove(pod, false)).To(BeFalse(), "before 1.29 an init container is not a sidecar")
	g.Expect(pod.Spec.InitContainers).To(HaveLen(1))
	g.Expect(pod.Labels).To(HaveLen(1))

	pod = &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: naming.Container}}}}
	g.Expect(Remove(pod, false)).To(BeTrue())
	g.Expect(pod.Spec.Containers).To(HaveLen(1))
}
