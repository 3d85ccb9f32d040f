// Package simtest checks sidecar injection on the simulated cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok nodes): the pods that the real ReplicaSet
// controller creates from an annotated Deployment get the sidecar through the registered
// webhook configuration, with their Deployment and ReplicaSet as resource attributes.
package simtest_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/sidecar"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/certs"
	wcollector "github.com/otelop/otelop/internal/webhook/collector"
	winstrumentation "github.com/otelop/otelop/internal/webhook/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
	"github.com/otelop/otelop/test/simcluster"
)

const agent = `
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
      traces:
        receivers: [otlp]
        exporters: [debug]
`

// TestDeploymentPodsGetTheSidecar runs a manager with the collector and pod webhooks (self-managed
// certificate) against the simulated cluster, then scales an annotated Deployment.
func TestDeploymentPodsGetTheSidecar(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated cluster: skipped with -short")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k8s, cleanup := startWithAgent(ctx, t)
	defer cleanup()

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{podmutation.Annotation: "true"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web:1"}}},
			},
		},
	}
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels(labels))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			g.Expect(p.Labels).To(HaveKeyWithValue(sidecar.InjectedLabel, "default.agent"))
			g.Expect(p.Spec.InitContainers).To(HaveLen(1))
			otc := p.Spec.InitContainers[0]
			g.Expect(otc.Name).To(Equal(naming.Container))
			g.Expect(otc.RestartPolicy).To(Equal(ptr.To(corev1.ContainerRestartPolicyAlways)))
			g.Expect(resourceAttributes(otc)).To(And(
				ContainSubstring("k8s.deployment.name=web"),
				ContainSubstring("k8s.replicaset.name=web-"),
				ContainSubstring("k8s.deployment.uid="+string(dep.UID)),
			))
		}
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed(), "pods with a native sidecar become available")
}

// startWithAgent starts the simulated cluster with the CRDs and webhooks as shipped and a
// manager serving the collector, Instrumentation and pod webhooks (native sidecars), and creates
// the sidecar collector "agent" in default once the webhooks answer. It returns an admin client
// and the cleanup to defer: the manager stops, then the cluster (its logs shown if t failed).
func startWithAgent(ctx context.Context, t *testing.T) (client.Client, func()) {
	t.Helper()
	g := NewWithT(t)
	c, err := simcluster.Start(ctx, simcluster.Options{Nodes: 1})
	g.Expect(err).NotTo(HaveOccurred())
	stopCluster := func() {
		if t.Failed() {
			t.Log(c.LogTails(15))
			t.Logf("component logs kept in %s", c.Keep())
		}
		_ = c.Stop()
	}
	ok := false
	defer func() {
		if !ok {
			stopCluster()
		}
	}()
	root := testenv.RepoRoot()
	_, err = simcluster.InstallCRDs(ctx, c.Config, filepath.Join(root, "config", "crd", "bases"), "simtest")
	g.Expect(err).NotTo(HaveOccurred())
	port := testenv.FreePort(t)
	g.Expect(simcluster.InstallWebhooks(ctx, c.Config, filepath.Join(root, "config", "webhook", "manifests.yaml"), port, nil)).To(Succeed())

	manifests := collector.DefaultOptions()
	manifests.NativeSidecars = true
	mgrCtx, stop := context.WithCancel(ctx)
	done := startManager(t, mgrCtx, c, port, manifests)
	cleanup := func() {
		stop()
		<-done
		stopCluster()
	}
	defer func() {
		if !ok {
			stop()
			<-done
		}
	}()

	k8s, err := client.New(c.Config, client.Options{Scheme: operator.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	otelcol := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"}}
	g.Expect(yaml.UnmarshalStrict([]byte(agent), &otelcol.Spec)).To(Succeed())
	// The first write waits for the CA bundle the certificate manager injects.
	g.Eventually(func() error { return k8s.Create(ctx, otelcol.DeepCopy()) }, time.Minute, 200*time.Millisecond).Should(Succeed())
	ok = true
	return k8s, cleanup
}

func resourceAttributes(c corev1.Container) string {
	for _, e := range c.Env {
		if e.Name == sidecar.ResourceAttributesEnv {
			return e.Value
		}
	}
	return ""
}

func startManager(t *testing.T, ctx context.Context, c *simcluster.Cluster, port int, manifests collector.Options) <-chan struct{} {
	t.Helper()
	g := NewWithT(t)
	certDir := filepath.Join(t.TempDir(), "certs")
	mgr, err := ctrl.NewManager(c.Config, ctrl.Options{
		Scheme:                 operator.NewScheme(),
		Cache:                  operator.CacheOptions(nil),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          crwebhook.NewServer(crwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir}),
	})
	g.Expect(err).NotTo(HaveOccurred())
	co := certs.DefaultOptions()
	co.Namespace, co.CertDir, co.CRDs = "default", certDir, nil
	co.ExtraIPs = []net.IP{net.ParseIP("127.0.0.1")}
	g.Expect(certs.Setup(ctx, mgr, co)).To(Succeed())
	g.Expect(wcollector.Setup(mgr, wcollector.Options{Manifests: manifests})).To(Succeed())
	// config/webhook as shipped also sends Instrumentations to their webhooks: serve them too.
	g.Expect(winstrumentation.Setup(mgr, winstrumentation.Options{})).To(Succeed())
	g.Expect(podmutation.Setup(mgr, podmutation.Options{Manifests: manifests})).To(Succeed())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil && !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("manager: %v", err)
		}
	}()
	return done
}
