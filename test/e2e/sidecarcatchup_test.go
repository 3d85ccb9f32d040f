package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	"github.com/otelop/otelop/internal/sidecar"
)

// TestSidecarsCatchUp is upstream's #1765 and #553 on the simulated cluster, through the real pod
// webhook. Two Deployments ask for sidecar collectors that do not exist yet, so their pods run
// without a sidecar, as pods admitted while the webhook was down do. Once the collectors exist,
// both are counted outdated (NotInjected) in status.sidecars; the collector "opted" is then
// annotated otelop.io/restart-pending-workloads=true and its Deployment is restarted once, its new
// pods carry the sidecar and the generation record, and its status turns current with a
// SidecarsCurrent Event. A config change (a new generation) makes it Outdated again and, opted in,
// it is restarted for the new generation. The collector "control" is never opted in: the same scans
// count its Deployment and never restart it.
func TestSidecarsCatchUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	app := sidecarApp(g, ns, "app", "opted")
	ctl := sidecarApp(g, ns, "ctl", "control")
	for _, d := range []*appsv1.Deployment{app, ctl} {
		g.Eventually(func(g Gomega) { availableWithoutSidecar(g, d) }).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	}

	for _, name := range []string{"opted", "control"} {
		create(g, ns, sidecarCollectorYAML(name))
	}
	status := func(name string) func(g Gomega) *v1beta1.SidecarWorkloads {
		return func(g Gomega) *v1beta1.SidecarWorkloads {
			c := &v1beta1.OpenTelemetryCollector{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
			return c.Status.Sidecars
		}
	}
	outdated := func(d *appsv1.Deployment, reason string) *v1beta1.SidecarWorkloads {
		return &v1beta1.SidecarWorkloads{Outdated: 1, OutdatedWorkloads: []v1beta1.OutdatedWorkload{
			{Kind: "Deployment", Namespace: ns, Name: d.Name, Reason: reason}}}
	}
	g.Eventually(status("opted")).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(outdated(app, ctrlinst.ReasonNotInjected)))
	g.Eventually(status("control")).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(outdated(ctl, ctrlinst.ReasonNotInjected)))
	g.Eventually(func(g Gomega) []string { return collectorEvents(g, ns, "control") }).WithTimeout(30 * time.Second).
		Should(ContainElement(ctrlinst.EventSidecarsOutdated))

	// Opt in once the webhook injects "opted" (so that the restarted pods get it).
	c := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "opted"}, c)).To(Succeed())
	record := fmt.Sprintf("%s/opted@%d", ns, c.Generation)
	awaitPodWebhook(g, ns, map[string]string{sidecar.InjectAnnotation: "opted"},
		HaveField("Annotations", HaveKeyWithValue(sidecar.GenerationAnnotation, record)))
	setOptIn(g, ns, "opted", "true")
	g.Eventually(func(g Gomega) { podsCarry(g, app, record) }).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Expect(restartedFor(g, app)).To(Equal("sidecar=" + record))
	g.Eventually(status("opted")).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(&v1beta1.SidecarWorkloads{Current: 1}))
	g.Eventually(func(g Gomega) []string { return collectorEvents(g, ns, "opted") }).WithTimeout(30 * time.Second).
		Should(ContainElements(ctrlinst.EventSidecarsOutdated, ctrlinst.EventWorkloadRestarted, ctrlinst.EventSidecarsCurrent))

	// An older config: the collector's next generation makes the pods Outdated; opted in, a restart
	// brings them to it.
	setOptIn(g, ns, "opted", "false")
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "opted"}, c)).To(Succeed())
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Config.Exporters.Object["debug"] = map[string]any{"verbosity": "detailed"}
	g.Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
	record2 := fmt.Sprintf("%s/opted@%d", ns, c.Generation)
	g.Expect(record2).NotTo(Equal(record))
	g.Eventually(status("opted")).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(outdated(app, ctrlinst.ReasonOutdated)))
	awaitPodWebhook(g, ns, map[string]string{sidecar.InjectAnnotation: "opted"},
		HaveField("Annotations", HaveKeyWithValue(sidecar.GenerationAnnotation, record2)))
	setOptIn(g, ns, "opted", "true")
	g.Eventually(func(g Gomega) { podsCarry(g, app, record2) }).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Expect(restartedFor(g, app)).To(Equal("sidecar=" + record2))
	g.Eventually(status("opted")).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(&v1beta1.SidecarWorkloads{Current: 1}))

	// The control: counted by every one of those scans, never restarted.
	g.Expect(status("control")(g)).To(Equal(outdated(ctl, ctrlinst.ReasonNotInjected)))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ctl), ctl)).To(Succeed())
	g.Expect(ctl.Spec.Template.Annotations).NotTo(HaveKey(ctrlinst.RestartedAtAnnotation))
	g.Expect(collectorEvents(g, ns, "control")).NotTo(ContainElement(ctrlinst.EventWorkloadRestarted))
	availableWithoutSidecar(g, ctl)
	// And "opted" was restarted once per generation: each restart is one template change, and
	// the Deployment was created at generation 1 (isomorphic restart Events are merged into one
	// series, so they cannot be counted).
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
	g.Expect(app.Generation).To(Equal(int64(3)))
}

func sidecarCollectorYAML(name string) string {
	return fmt.Sprintf(`
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: %s
spec:
  mode: sidecar
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`, name)
}

// sidecarApp creates a one-replica Deployment whose pods ask for the sidecar collector.
func sidecarApp(g Gomega, ns, name, collector string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{sidecar.InjectAnnotation: collector}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "example.invalid/" + name + ":1"}}},
			},
		},
	}
	g.Expect(k8s.Create(context.Background(), d)).To(Succeed())
	return d
}

// livePods returns d's pods that are not being deleted.
func livePods(g Gomega, d *appsv1.Deployment) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(context.Background(), pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func available(g Gomega, d *appsv1.Deployment) {
	got := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(d), got)).To(Succeed())
	g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	g.Expect(got.Status.UpdatedReplicas).To(Equal(int32(1)))
	g.Expect(got.Status.Replicas).To(Equal(int32(1)))
	g.Expect(got.Status.AvailableReplicas).To(Equal(int32(1)))
}

func availableWithoutSidecar(g Gomega, d *appsv1.Deployment) {
	available(g, d)
	pods := livePods(g, d)
	g.Expect(pods).To(HaveLen(1))
	g.Expect(pods[0].Spec.InitContainers).NotTo(ContainElement(HaveField("Name", "otc-container")))
	g.Expect(pods[0].Spec.Containers).NotTo(ContainElement(HaveField("Name", "otc-container")))
	g.Expect(pods[0].Annotations).NotTo(HaveKey(sidecar.GenerationAnnotation))
}

// podsCarry asserts that d is available with one pod that has the sidecar of record.
func podsCarry(g Gomega, d *appsv1.Deployment, record string) {
	available(g, d)
	pods := livePods(g, d)
	g.Expect(pods).To(HaveLen(1))
	g.Expect(pods[0].Spec.InitContainers).To(ContainElement(HaveField("Name", "otc-container")))
	g.Expect(pods[0].Annotations).To(HaveKeyWithValue(sidecar.GenerationAnnotation, record))
}

func restartedFor(g Gomega, d *appsv1.Deployment) string {
	got := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(d), got)).To(Succeed())
	return got.Spec.Template.Annotations[ctrlinst.SidecarRestartedForAnnotation]
}

func setOptIn(g Gomega, ns, name, value string) {
	c := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	patch := client.MergeFrom(c.DeepCopy())
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[ctrlinst.RestartOptInAnnotation] = value
	g.Expect(k8s.Patch(context.Background(), c, patch)).To(Succeed())
}

// collectorEvents lists the reasons of the Events about the collector name in ns.
func collectorEvents(g Gomega, ns, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "OpenTelemetryCollector" && e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}
