package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
)

// TestEverySampleBecomesReady applies config/samples (what make run shows) and expects every
// collector among them to become Ready, whatever its mode.
func TestEverySampleBecomesReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(BeEmpty())
	var collectors, allocators []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				g.Expect(errors.Is(err, io.EOF)).To(BeTrue(), f)
				break
			}
			if len(u.Object) == 0 || u.GetKind() == "Kustomization" {
				continue
			}
			u.SetNamespace(ns)
			g.Eventually(func() error {
				return k8s.Create(ctx, u.DeepCopy())
			}).WithTimeout(60*time.Second).WithPolling(time.Second).Should(Succeed(), f)
			if u.GetKind() == "OpenTelemetryCollector" {
				collectors = append(collectors, u.GetName())
			}
			if u.GetKind() == "TargetAllocator" {
				allocators = append(allocators, u.GetName())
			}
		}
	}
	g.Expect(len(collectors)).To(BeNumerically(">=", 5), "a sample per mode plus the v1alpha1 one")
	for _, name := range collectors {
		g.Eventually(func(g Gomega) {
			col := &v1beta1.OpenTelemetryCollector{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, col)).To(Succeed())
			c := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
			g.Expect(c).NotTo(BeNil(), name)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), name+": "+c.Message)
		}).WithTimeout(timeout).WithPolling(500*time.Millisecond).Should(Succeed(), name)
	}
	// Standalone target allocators run upstream's image in a Deployment of their own.
	g.Expect(allocators).NotTo(BeEmpty())
	for _, name := range allocators {
		g.Eventually(func(g Gomega) {
			dep := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-targetallocator"}, dep)).To(Succeed())
			g.Expect(dep.Status.AvailableReplicas).To(BeNumerically(">=", 1))
		}).WithTimeout(timeout).WithPolling(500*time.Millisecond).Should(Succeed(), name)
	}
}
