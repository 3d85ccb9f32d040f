package realnode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/test/realnode"
)

const timeout = 90 * time.Second

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-"))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	cs := cluster.Clientset
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// podLogs returns a container's log as read through the API server from the kubelet.
func podLogs(ctx context.Context, ns, pod, container string) (string, error) {
	data, err := cluster.Clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	return string(data), err
}

// TestPodRunsAndItsLogsAreReadable proves the stack: a pod with an image built from Go source is
// scheduled on the real node, gets an IP on the namespace's bridge, runs, and its output is read
// back through the API server and the kubelet.
func TestPodRunsAndItsLogsAreReadable(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: realnode.OTLPAppImage, ImagePullPolicy: corev1.PullNever,
			// Nothing listens here: the app logs each failed export, which is what we read back.
			Env: []corev1.EnvVar{{Name: "OTLP_ENDPOINT", Value: "localhost:4317"}},
		}}},
	}
	_, err := cluster.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		p, err := cluster.Clientset.CoreV1().Pods(ns).Get(ctx, "app", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		g.Expect(p.Spec.NodeName).To(Equal(realnode.NodeName))
		g.Expect(p.Status.PodIP).To(HavePrefix("10.244.0."))
		g.Expect(p.Status.ContainerStatuses).To(ContainElement(HaveField("Started", HaveValue(BeTrue()))))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		logs, err := podLogs(ctx, ns, "app", "app")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(logs).To(ContainSubstring("export 0 to localhost:4317"))
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
}
