package instrumentation_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// memoryDeployments is how many Deployments each namespace of the memory test holds (one page).
const memoryDeployments = 40

// TestScanMemoryDoesNotGrowWithPodTemplates is the attack of issue 29, finding 7: Deployments
// with large pod templates (here about 100 KB of environment each; the API server takes objects
// of up to about 1.5 MB) made the scan hold whole pages of them, 500 per page by default, against
// the operator's 256 MiB limit. Two namespaces hold the same Deployments asking for
// instrumentation, one with small templates and one with large ones; the scanner reads each as
// one page. What a scan allocates bounds what it holds at once: scanning the large namespace may
// allocate more than the small one by less than a quarter of the large templates' total size
// (the old scan decoded every template, so it allocated more than their whole size). Both scans
// find every workload (the control).
func TestScanMemoryDoesNotGrowWithPodTemplates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	small, large, templateBytes := memoryNamespaces(t)
	ix := ctrlinst.NewIndex([]v1alpha1.Instrumentation{
		{ObjectMeta: metav1.ObjectMeta{Namespace: small, Name: "instr", Generation: 1}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: large, Name: "instr", Generation: 1}},
	})
	s := ctrlinst.Scanner{Reader: k8s, Apps: apps, PageSize: memoryDeployments}
	allocated := func(ns string) uint64 {
		// The least of a few scans: other goroutines (the suite's controller) allocate too.
		least := uint64(0)
		for range 5 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ws, err := s.Namespace(ctx, ns, nil, ix, &ctrlinst.Stats{})
			runtime.ReadMemStats(&after)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ws).To(HaveLen(memoryDeployments), "every workload is found")
			if n := after.TotalAlloc - before.TotalAlloc; least == 0 || n < least {
				least = n
			}
		}
		return least
	}
	smallBytes, largeBytes := allocated(small), allocated(large)
	t.Logf("one scan of %d Deployments allocates %d KiB with small templates, %d KiB with %d KiB of templates (%.1f%% of them)",
		memoryDeployments, smallBytes>>10, largeBytes>>10, templateBytes>>10,
		100*float64(largeBytes-min(largeBytes, smallBytes))/float64(templateBytes))
	g.Expect(largeBytes).To(BeNumerically("<", smallBytes+uint64(templateBytes/4)))
}

// memoryNamespaces creates (once per test binary) two namespaces of memoryDeployments Deployments
// asking for Java, with small and with large (about 100 KB) pod templates, and returns them and
// the large templates' total size.
func memoryNamespaces(t testing.TB) (small, large string, templateBytes int) {
	t.Helper()
	if memorySmall == "" {
		memorySmall, memoryLarge = newNamespace(t, nil), newNamespace(t, nil)
		bulk := strings.Repeat("x", 500)
		for i := range memoryDeployments {
			manyDeployments(t, memorySmall, i, nil)
			var env []corev1.EnvVar
			for j := range 200 {
				env = append(env, corev1.EnvVar{Name: fmt.Sprintf("BULK_%d", j), Value: bulk})
				memoryTemplateBytes += len(bulk) + 20
			}
			manyDeployments(t, memoryLarge, i, env)
		}
	}
	return memorySmall, memoryLarge, memoryTemplateBytes
}

var (
	memorySmall, memoryLarge string
	memoryTemplateBytes      int
)

// BenchmarkScanDeployments reports what scanning a page of memoryDeployments Deployments
// allocates (B/op) with small and with large pod templates: `go test -run - -bench
// ScanDeployments -benchtime 20x ./internal/controller/instrumentation/`.
func BenchmarkScanDeployments(b *testing.B) {
	small, large, _ := memoryNamespaces(b)
	ix := ctrlinst.NewIndex([]v1alpha1.Instrumentation{
		{ObjectMeta: metav1.ObjectMeta{Namespace: small, Name: "instr", Generation: 1}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: large, Name: "instr", Generation: 1}},
	})
	s := ctrlinst.Scanner{Reader: k8s, Apps: apps, PageSize: memoryDeployments}
	for _, ns := range []struct{ name, ns string }{{"small", small}, {"large", large}} {
		b.Run(ns.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Namespace(context.Background(), ns.ns, nil, ix, &ctrlinst.Stats{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// manyDeployments creates Deployment i of ns, asking for Java, with env in its container.
func manyDeployments(t testing.TB, ns string, i int, env []corev1.EnvVar) {
	t.Helper()
	name := fmt.Sprintf("app-%d", i)
	tmpl := template(name, map[string]string{inst.InjectAnnotation(inst.Java): "instr"})
	tmpl.Spec.Containers[0].Env = env
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: tmpl}}
	if err := k8s.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}
