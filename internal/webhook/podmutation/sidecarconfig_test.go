package podmutation_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/upgrade"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// TestSidecarMountsTheMigratedConfigMap: the collector reconciler builds a collector's ConfigMap
// from the spec migrated to the operator's collector version (internal/upgrade), and names it by
// that spec's hash. A sidecar that mounts the ConfigMap must name the same one, or the kubelet
// never starts the pod. A collector last managed at 0.121.0 whose config still has the metrics
// address that 0.122.0 moves to a reader: the injected volume names the migrated ConfigMap, not
// the one of the stored spec.
func TestSidecarMountsTheMigratedConfigMap(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "migrated-sidecar", nil)
	newCollector(t, ns, "legacy", v1beta1.ModeSidecar, func(c *v1beta1.OpenTelemetryCollector) {
		c.Spec.Config = v1beta1.Config{}
		g.Expect(yaml.UnmarshalStrict([]byte(`
receivers: {otlp: {protocols: {grpc: {}}}}
exporters: {debug: {}}
service:
  telemetry: {metrics: {address: "0.0.0.0:9999"}}
  pipelines: {traces: {receivers: [otlp], exporters: [debug]}}
`), &c.Spec.Config)).To(Succeed())
	})
	stored := &v1beta1.OpenTelemetryCollector{}
	key := client.ObjectKey{Namespace: ns, Name: "legacy"}
	g.Expect(env.Client.Get(ctx, key, stored)).To(Succeed())
	stored.Status.Version = "0.121.0"
	g.Expect(env.Client.Status().Update(ctx, stored)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cached := &v1beta1.OpenTelemetryCollector{}
		g.Expect(mgr.GetClient().Get(ctx, key, cached)).To(Succeed())
		g.Expect(cached.Status.Version).To(Equal("0.121.0"))
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())

	// What the reconciler builds: the migrated copy, and its ConfigMap.
	migrated, changes, err := upgrade.Apply(*stored, stored.Status.Version, manifests.CollectorVersion)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upgrade.Rewrites(changes)).To(BeTrue(), "precondition: the routine rewrites this config")
	storedHash, err := mcollector.ConfigHash(stored.Spec.Config)
	g.Expect(err).NotTo(HaveOccurred())
	migratedHash, err := mcollector.ConfigHash(migrated.Spec.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(naming.ConfigMap("legacy", migratedHash)).NotTo(Equal(naming.ConfigMap("legacy", storedHash)), "precondition")
	objs, err := mcollector.Build(migrated, manifests)
	g.Expect(err).NotTo(HaveOccurred())
	var built []string
	for _, o := range objs {
		if _, ok := o.(*corev1.ConfigMap); ok {
			built = append(built, o.GetName())
		}
	}
	g.Expect(built).To(ConsistOf(naming.ConfigMap("legacy", migratedHash)))

	got, warnings := create(t, newPod(ns, "p", map[string]string{podmutation.Annotation: "legacy"}))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(got.Spec.Volumes).To(ContainElement(And(
		HaveField("Name", naming.ConfigMapVolume),
		HaveField("ConfigMap.Name", naming.ConfigMap("legacy", migratedHash)))))
}
