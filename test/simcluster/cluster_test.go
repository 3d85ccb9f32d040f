package simcluster_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/test/simcluster"
)

// TestDeploymentBecomesAvailable is the foundation's end-to-end proof: the real controller-manager
// creates pods, the real scheduler binds them to fake nodes, kwok makes them Ready, and the
// Deployment reports 3/3 available. The API server survives a crash and restart. Stopping the
// cluster leaves no process behind.
func TestDeploymentBecomesAvailable(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: 3, Progress: t.Logf})
	g.Expect(err).NotTo(HaveOccurred())
	stopped := false
	defer func() {
		if t.Failed() {
			t.Logf("component logs kept in %s", c.Keep())
		}
		if !stopped {
			_ = c.Stop()
		}
	}()
	cs, err := kubernetes.NewForConfig(c.Config)
	g.Expect(err).NotTo(HaveOccurred())

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web:1"}}},
			},
		},
	}
	_, err = cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	g.Eventually(func(g Gomega) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(3)))
	}).WithTimeout(90*time.Second).WithPolling(250*time.Millisecond).Should(Succeed(), func() string { return c.LogTails(20) })

	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pods.Items).To(HaveLen(3))
	for _, p := range pods.Items {
		g.Expect(p.Status.PodIP).To(HavePrefix("127."), "pod IPs must be loopback")
		g.Expect(p.Status.HostIP).To(HavePrefix("127."), "node IPs must be loopback")
		g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
		g.Expect(p.Status.ContainerStatuses[0].Started).To(Equal(ptr.To(true)))
	}

	// A crashed API server comes back on the same port with the same data; the new process is
	// one of the cluster's, so Stop ends it too.
	before := c.PIDs()
	g.Expect(c.RestartAPIServer(ctx, 100*time.Millisecond)).To(Succeed())
	g.Expect(c.PIDs()).NotTo(Equal(before))
	d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Status.AvailableReplicas).To(Equal(int32(3)))

	pids := c.PIDs()
	g.Expect(pids).To(HaveLen(5))
	g.Expect(c.Stop()).To(Succeed())
	stopped = true
	for _, pid := range pids {
		err := syscall.Kill(pid, 0)
		g.Expect(errors.Is(err, syscall.ESRCH)).To(BeTrue(), "process %d still exists after Stop", pid)
	}
}
