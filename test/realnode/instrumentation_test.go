package realnode_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/test/realnode"
)

// instrumentation is the Instrumentation both injection tests use: an exporter endpoint, a
// resource attribute, and the stand-in Java agent image.
const instrumentation = `
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: inst
spec:
  imagePullPolicy: IfNotPresent
  exporter:
    endpoint: http://collector.example:4317
  resource:
    resourceAttributes:
      team: checkout
  java:
    image: ` + realnode.AgentImage + `
`

// injectedPod creates a pod running otlpapp with annotation key set to "true" and returns it as
// admitted. The pod webhook reads Instrumentations from the operator's cache, which may not have
// seen the one just created: a pod admitted without the injection is deleted and created again.
func injectedPod(t *testing.T, ns, name, key string) *corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	pods := cluster.Clientset.CoreV1().Pods(ns)
	var admitted *corev1.Pod
	g.Eventually(func(g Gomega) {
		err := pods.Delete(ctx, name, *metav1.NewDeleteOptions(0))
		g.Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Eventually(func() bool {
			_, err := pods.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}).WithTimeout(30 * time.Second).Should(BeTrue())
		p, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{key: "true"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: realnode.OTLPAppImage, ImagePullPolicy: corev1.PullNever,
			}}},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "OTEL_SERVICE_NAME")),
			"the pod webhook injected nothing (yet)")
		admitted = p
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return admitted
}

// appLog waits until the pod's app container has logged its environment and returns the log.
func appLog(t *testing.T, ns, pod string) string {
	t.Helper()
	var logs string
	NewWithT(t).Eventually(func(g Gomega) {
		var err error
		logs, err = podLogs(context.Background(), ns, pod, "app")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(logs).To(ContainSubstring("export 0 to"), "the app has started")
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return logs
}

// TestSDKInjectionReachesTheProcess: a pod annotated inject-sdk gets the SDK's environment from
// the Instrumentation, and the process really sees it, with the downward-API references in
// OTEL_RESOURCE_ATTRIBUTES expanded by the kubelet (the pod's and the node's names).
func TestSDKInjectionReachesTheProcess(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ns := namespace(t)
	g.Expect(create(ns, instrumentation)).To(Succeed())
	pod := injectedPod(t, ns, "shop", "instrumentation.opentelemetry.io/inject-sdk")
	logs := appLog(t, ns, "shop")
	t.Logf("the app's environment:\n%s", grepLines(logs, " env "))

	g.Expect(logs).To(ContainSubstring("env OTEL_SERVICE_NAME=shop\n"))
	g.Expect(logs).To(ContainSubstring("env OTEL_EXPORTER_OTLP_ENDPOINT=http://collector.example:4317\n"))
	attrs := envLine(logs, "OTEL_RESOURCE_ATTRIBUTES")
	g.Expect(strings.Split(attrs, ",")).To(ContainElements(
		"k8s.pod.name=shop", "k8s.node.name="+realnode.NodeName, "k8s.namespace.name="+ns, "team=checkout"))
	g.Expect(attrs).NotTo(ContainSubstring("$("), "the kubelet expands the downward-API references")
	// Every variable the webhook set to a literal value reaches the process unchanged.
	for _, e := range pod.Spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "OTEL_") && e.ValueFrom == nil && !strings.Contains(e.Value, "$(") {
			g.Expect(logs).To(ContainSubstring(fmt.Sprintf("env %s=%s\n", e.Name, e.Value)))
		}
	}
}

// TestJavaInjectionCopiesTheAgent: a pod annotated inject-java gets an init container running
// the Instrumentation's java image, which copies /javaagent.jar into the shared volume; the app
// container finds the file where JAVA_TOOL_OPTIONS says (-javaagent:<path>) and reads it.
func TestJavaInjectionCopiesTheAgent(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	g.Expect(create(ns, instrumentation)).To(Succeed())
	pod := injectedPod(t, ns, "shop", "instrumentation.opentelemetry.io/inject-java")
	g.Expect(pod.Spec.InitContainers).To(ContainElement(HaveField("Image", realnode.AgentImage)))
	logs := appLog(t, ns, "shop")
	t.Logf("the app's environment and agent:\n%s", grepLines(logs, " env ", " javaagent "))

	agent := "/otel-auto-instrumentation-java-app/javaagent.jar"
	g.Expect(envLine(logs, "JAVA_TOOL_OPTIONS")).To(ContainSubstring("-javaagent:" + agent))
	g.Expect(logs).To(ContainSubstring(fmt.Sprintf("javaagent %s: %d bytes: %q\n",
		agent, len(realnode.AgentJarContent), realnode.AgentJarContent)))
	g.Expect(logs).To(ContainSubstring("env OTEL_SERVICE_NAME=shop\n"))

	p, err := cluster.Clientset.CoreV1().Pods(ns).Get(ctx, "shop", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Status.InitContainerStatuses).To(HaveLen(1))
	term := p.Status.InitContainerStatuses[0].State.Terminated
	g.Expect(term).NotTo(BeNil())
	g.Expect(term.ExitCode).To(BeZero(), "the init container's cp succeeded")
}

// envLine returns the value the app logged for variable name ("" if none).
func envLine(logs, name string) string {
	for _, l := range strings.Split(logs, "\n") {
		if _, v, ok := strings.Cut(l, " env "+name+"="); ok {
			return v
		}
	}
	return ""
}

// grepLines returns the lines of logs containing any of subs.
func grepLines(logs string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
