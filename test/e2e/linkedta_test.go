package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const linkedTA = `
apiVersion: opentelemetry.io/v1alpha1
kind: TargetAllocator
metadata:
  name: shared
`

const linkedCollector = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: linked
  labels:
    opentelemetry.io/target-allocator: shared
spec:
  mode: statefulset
  replicas: 2
  config:
    receivers:
      prometheus:
        config:
          scrape_configs:
          - job_name: linked
            static_configs:
            - targets: [%s]
    exporters:
      debug: {}
    service:
      pipelines:
        metrics: {receivers: [prometheus], exporters: [debug]}
`

// TestLabelLinkedTargetAllocatorServesTheCollector: a standalone TargetAllocator and a
// statefulset collector labelled opentelemetry.io/target-allocator=<it> on the simulated cluster.
// The collector's config holds the target_allocator block (no scrape_configs), and our
// allocator's binary, run as a local process with the generated Deployment's args and env and the
// generated file (as in TestTargetAllocatorServesTheOperatorsStatefulSet), finds the collector's
// pods and gives each of them a non-empty share of the collector's static job.
func TestLabelLinkedTargetAllocatorServesTheCollector(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	var targets, quoted []string
	for i := 0; i < 20; i++ {
		targets = append(targets, fmt.Sprintf("127.0.3.%d:9100", i+1))
		quoted = append(quoted, fmt.Sprintf("%q", targets[i]))
	}
	sort.Strings(targets)
	create(g, ns, linkedTA)
	create(g, ns, fmt.Sprintf(linkedCollector, strings.Join(quoted, ", ")))

	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "linked-collector"}, sts)).To(Succeed())
		g.Expect(sts.Status.ReadyReplicas).To(BeEquivalentTo(2))
		var cm *corev1.ConfigMap
		for _, v := range sts.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil {
				cm = &corev1.ConfigMap{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: v.ConfigMap.Name}, cm)).To(Succeed())
			}
		}
		g.Expect(cm).NotTo(BeNil())
		cfg := cm.Data["collector.yaml"]
		g.Expect(cfg).To(ContainSubstring("endpoint: http://shared-targetallocator:80\n"))
		g.Expect(cfg).To(ContainSubstring("collector_id: ${POD_NAME}\n"))
		g.Expect(cfg).NotTo(ContainSubstring("scrape_configs"))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())

	cm := &corev1.ConfigMap{}
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared-targetallocator"}, cm)).To(Succeed())
		g.Expect(cm.Data["targetallocator.yaml"]).To(ContainSubstring("app.kubernetes.io/instance: " + ns + ".linked"))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared-targetallocator"}, dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())

	ctr := dep.Spec.Template.Spec.Containers[0]
	dir := t.TempDir()
	path := filepath.Join(dir, "targetallocator.yaml")
	g.Expect(os.WriteFile(path, []byte(cm.Data["targetallocator.yaml"]), 0o600)).To(Succeed())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	listen := l.Addr().String()
	l.Close()
	args := append(append([]string{}, ctr.Args...), "--config-file="+path, "--listen-addr="+listen,
		"--kubeconfig-path="+cluster.Kubeconfig)
	stop := startAllocator(t, allocatorBinary(t), args, containerEnv(ctr.Env, dep.Namespace), filepath.Join(dir, "allocator.log"))
	defer stop()

	pods := []string{"linked-collector-0", "linked-collector-1"}
	for _, pod := range pods {
		g.Eventually(func() (string, error) { return allocated(listen, "linked", []string{pod}) }).
			WithTimeout(timeout).WithPolling(time.Second).ShouldNot(BeEmpty(), "targets for %s", pod)
	}
	g.Eventually(func() (string, error) { return allocated(listen, "linked", pods) }).
		WithTimeout(timeout).WithPolling(time.Second).Should(Equal(strings.Join(targets, ",")), "every target, each to one pod")
}
