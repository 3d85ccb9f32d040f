package crdtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
)

func samplesDir() string { return filepath.Join(testenv.RepoRoot(), "config", "samples") }

func readSample(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samplesDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return u
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crdtest-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// TestSamplesApply creates every sample except the v1alpha1 collector, which has its own test.
func TestSamplesApply(t *testing.T) {
	entries, err := os.ReadDir(samplesDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") || e.Name() == v1alpha1CollectorSample {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			g := NewWithT(t)
			u := readSample(t, e.Name())
			u.SetNamespace(ns)
			g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())
		})
	}
	if n < 8 {
		t.Fatalf("expected at least 8 samples, found %d", n)
	}
}

// TestCollectorDefaults checks the schema defaults of a stored v1beta1 collector.
func TestCollectorDefaults(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	u := readSample(t, "opentelemetry.io_v1beta1_opentelemetrycollector_statefulset.yaml")
	u.SetNamespace(ns)
	g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())

	got := &v1beta1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), got)).To(Succeed())
	g.Expect(got.Spec.ManagementState).To(Equal(v1beta1.ManagementStateManaged))
	g.Expect(got.Spec.Replicas).To(Equal(ptr.To[int32](2)))
	g.Expect(got.Spec.ConfigVersions).To(Equal(3))
	g.Expect(got.Spec.IpFamilyPolicy).To(Equal(ptr.To(corev1.IPFamilyPolicySingleStack)))
	ta := got.Spec.TargetAllocator
	g.Expect(ta.AllocationStrategy).To(Equal(v1beta1.TargetAllocatorAllocationStrategyConsistentHashing))
	g.Expect(ta.FilterStrategy).To(Equal(v1beta1.TargetAllocatorFilterStrategyRelabelConfig))
	g.Expect(ta.CollectorNotReadyGracePeriod.Duration.String()).To(Equal("30s"))
	g.Expect(ta.CollectorTargetReloadInterval.Duration.String()).To(Equal("30s"))
	g.Expect(ta.PrometheusCR.ScrapeInterval.Duration.String()).To(Equal("30s"))
	g.Expect(ta.PrometheusCR.ServiceMonitorNamespaceSelector).To(Equal(&metav1.LabelSelector{}))
	// Unknown configuration keys survive pruning.
	prom := got.Spec.Config.Receivers.Object["prometheus"].(map[string]any)
	g.Expect(prom["config"]).To(HaveKey("scrape_configs"))

	// The scale subresource reads .spec.replicas.
	g.Expect(got.Spec.Replicas).NotTo(BeNil())
}

const v1alpha1CollectorSample = "opentelemetry.io_v1alpha1_opentelemetrycollector.yaml"

// TestV1alpha1CollectorSample applies the deprecated v1alpha1 sample through the conversion
// webhook and reads it back as v1beta1, with the YAML configuration turned into structure.
func TestV1alpha1CollectorSample(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	u := readSample(t, v1alpha1CollectorSample)
	u.SetNamespace(ns)
	g.Eventually(func() error { return env.Client.Create(context.Background(), u) }).Should(Succeed())

	got := &v1beta1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), got)).To(Succeed())
	g.Expect(got.Spec.Mode).To(Equal(v1beta1.ModeDeployment))
	g.Expect(got.Spec.Config.Receivers.Object).To(HaveKey("otlp"))
	g.Expect(got.Spec.Config.Service.Pipelines).To(HaveKey("traces"))

	back := &v1alpha1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), back)).To(Succeed())
	g.Expect(back.Spec.Config).To(ContainSubstring("otlp"))
}
