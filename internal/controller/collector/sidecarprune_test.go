package collector_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
)

// TestSidecarConfigMapKeptWhilePodsMountIt: an injected sidecar reads its config from the
// ConfigMap of the config version it was created with. With configVersions 1, two config changes
// would prune the first ConfigMap; a pod that mounts it keeps it. Control: once that pod is gone,
// the next config change prunes it.
func TestSidecarConfigMapKeptWhilePodsMountIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "agent", v1beta1.ModeSidecar, otlpConfig)
	col.Spec.ConfigVersions = 1
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	configMaps := func(g Gomega) []string {
		l := &corev1.ConfigMapList{}
		g.Expect(k8s.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": ns + ".agent"})).To(Succeed())
		var names []string
		for _, cm := range l.Items {
			names = append(names, cm.Name)
		}
		return names
	}
	var first string
	g.Eventually(func(g Gomega) {
		names := configMaps(g)
		g.Expect(names).To(HaveLen(1))
		first = names[0]
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app", Labels: map[string]string{sidecar.InjectedLabel: ns + ".agent"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "app"}},
			Volumes: []corev1.Volume{{Name: naming.ConfigMapVolume, VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: first}}}}},
		},
	}
	g.Expect(k8s.Create(ctx, pod)).To(Succeed())

	change := func(verbosity string, want int) {
		time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
		get(g, ns, "agent", col)
		col.Spec.Config.Exporters.Object["debug"] = map[string]any{"verbosity": verbosity}
		g.Expect(k8s.Update(ctx, col)).To(Succeed())
		g.Eventually(func(g Gomega) { g.Expect(configMaps(g)).To(HaveLen(want)) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	}
	change("basic", 2)
	change("normal", 3) // the current one, one older one, and the one the pod mounts
	g.Consistently(func(g Gomega) []string { return configMaps(g) }).WithTimeout(3 * time.Second).WithPolling(poll).Should(ContainElement(first))

	g.Expect(k8s.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}) != nil
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue())
	change("detailed", 2)
	g.Expect(configMaps(g)).NotTo(ContainElement(first))
}
