package simtest_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// TestDeploymentPodsGetJavaPythonAndSidecar: a Deployment annotated for a collector sidecar and
// for Java and Python (multi-instrumentation, each in its own container) gets, through the real
// ReplicaSet controller, pods with the sidecar, both agents' init containers, volumes and
// environment, the otelop.io/instrumented record, and they become available.
func TestDeploymentPodsGetJavaPythonAndSidecar(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated cluster: skipped with -short")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k8s, cleanup := startWithAgent(ctx, t)
	defer cleanup()
	inst := &v1alpha1.Instrumentation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "otel"},
		Spec: v1alpha1.InstrumentationSpec{
			Exporter: v1alpha1.Exporter{Endpoint: "http://localhost:4318"},
			Java:     v1alpha1.Java{Image: "example.invalid/javaagent:2"},
			Python:   v1alpha1.Python{Image: "example.invalid/python:0.50b0"},
		},
	}
	g.Expect(k8s.Create(ctx, inst)).To(Succeed())

	labels := map[string]string{"app": "shop"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					podmutation.Annotation:                                             "true",
					instrumentation.InjectAnnotation(instrumentation.Java):             "true",
					instrumentation.InjectAnnotation(instrumentation.Python):           "otel",
					instrumentation.ContainerNamesAnnotationOf(instrumentation.Java):   "api",
					instrumentation.ContainerNamesAnnotationOf(instrumentation.Python): "worker",
				}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "api", Image: "example.invalid/api:1"},
					{Name: "worker", Image: "example.invalid/worker:1", Env: []corev1.EnvVar{{Name: "PYTHONPATH", Value: "/app"}}},
				}},
			},
		},
	}
	// Until the manager's cache has the Instrumentation, a pod may miss it (with a warning): the
	// Deployment is created once a dry-run pod comes back instrumented.
	g.Eventually(func(g Gomega) {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe", Annotations: map[string]string{
				instrumentation.InjectAnnotation(instrumentation.Java): "true"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
		}
		g.Expect(k8s.Create(ctx, probe, client.DryRunAll)).To(Succeed())
		g.Expect(probe.Annotations).To(HaveKey(instrumentation.InjectedAnnotation))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels(labels))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			g.Expect(p.Annotations).To(HaveKeyWithValue(instrumentation.InjectedAnnotation,
				"java=default/otel@1,python=default/otel@1"))
			g.Expect(names(p.Spec.InitContainers)).To(Equal([]string{
				naming.Container, "opentelemetry-auto-instrumentation-java", "opentelemetry-auto-instrumentation-python"}))
			g.Expect(volumeNames(p.Spec.Volumes)).To(ContainElements(
				"opentelemetry-auto-instrumentation-java", "opentelemetry-auto-instrumentation-python"))
			api, worker := p.Spec.Containers[0], p.Spec.Containers[1]
			g.Expect(envValue(api, "JAVA_TOOL_OPTIONS")).To(Equal(" -javaagent:/otel-auto-instrumentation-java-api/javaagent.jar"))
			g.Expect(envValue(api, "OTEL_SERVICE_NAME")).To(Equal("shop"))
			g.Expect(envValue(api, "OTEL_RESOURCE_ATTRIBUTES")).To(And(
				ContainSubstring("k8s.deployment.name=shop"), ContainSubstring("k8s.replicaset.name=shop-"),
				ContainSubstring("k8s.container.name=api")))
			g.Expect(envValue(worker, "PYTHONPATH")).To(Equal(
				"/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation:/app:/otel-auto-instrumentation-python"))
			g.Expect(envValue(worker, "JAVA_TOOL_OPTIONS")).To(BeEmpty())
		}
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed(), "instrumented pods with a native sidecar become available")
}

func names(cs []corev1.Container) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func volumeNames(vs []corev1.Volume) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
