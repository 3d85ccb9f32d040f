package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// restartModes are the modes the restart proofs converge; sidecar makes only a ConfigMap and a
// ServiceAccount, the others their workload, Services and more.
var restartModes = []v1beta1.Mode{v1beta1.ModeDeployment, v1beta1.ModeDaemonSet, v1beta1.ModeStatefulSet, v1beta1.ModeSidecar}

// taConfig scrapes with Prometheus service discovery, for a collector with a target allocator.
const taConfig = `
receivers:
  prometheus:
    config:
      scrape_configs:
        - job_name: pods
          kubernetes_sd_configs: [{role: pod}]
exporters:
  debug: {}
service:
  pipelines:
    metrics: {receivers: [prometheus], exporters: [debug]}
`

// convergeCollectors creates perMode collectors of every mode in ns (with collector labels, and
// one with cluster RBAC per mode) and waits until each has a status for its generation and the
// operator stopped writing in ns.
func convergeCollectors(t *testing.T, ns string, perMode int, labels map[string]string) []string {
	g := NewWithT(t)
	ctx := context.Background()
	var names []string
	for _, m := range restartModes {
		for i := range perMode {
			name := fmt.Sprintf("r-%s-%d", m, i)
			cfg := otlpConfig
			if i == 0 {
				cfg = rbacConfig
			}
			col := newCollector(t, ns, name, m, cfg)
			col.Labels = labels
			if m == v1beta1.ModeDeployment && i == 1 {
				col.Spec.Autoscaler = &v1beta1.AutoscalerSpec{MinReplicas: ptrInt32(1), MaxReplicas: ptrInt32(3)}
			}
			if m == v1beta1.ModeStatefulSet && i == 1 {
				// A target allocator: a custom resource the collector owns, and its own objects.
				col = newCollector(t, ns, name, m, taConfig)
				col.Labels = labels
				col.Spec.TargetAllocator.Enabled = true
			}
			g.Expect(k8s.Create(ctx, col)).To(Succeed())
			names = append(names, name)
		}
	}
	g.Eventually(func(g Gomega) {
		for _, name := range names {
			cur := get(g, ns, name, &v1beta1.OpenTelemetryCollector{})
			g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation), name)
		}
		if perMode > 1 {
			get(g, ns, "r-statefulset-1-targetallocator", &appsv1.Deployment{})
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	waitQuiet(t, ns)
	return names
}

// waitQuiet waits until the operator made no write in ns (or cluster-scoped) for 3 seconds.
func waitQuiet(t *testing.T, ns string) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, before := writes.Snapshot()
		time.Sleep(3 * time.Second)
		if len(writes.SinceIn(before, ns)) == 0 {
			return
		}
	}
	t.Fatalf("the operator kept writing in %s", ns)
}

// TestRestartWritesNothing is the restart proof: collectors of every mode converge, the operator
// stops, a new one starts (empty caches, an applier that remembers nothing), reconciles every
// collector at least twice, and sends no write request for them.
func TestRestartWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	names := convergeCollectors(t, ns, 2, map[string]string{"team": "payments"})

	// What the cache keeps per workload: our managedFields entry (the rest is dropped).
	deps := &appsv1.DeploymentList{}
	g.Expect(k8s.List(context.Background(), deps, client.InNamespace(ns))).To(Succeed())
	for _, d := range deps.Items {
		for _, e := range d.ManagedFields {
			if e.Manager == "opentelemetry-operator" && e.Operation == "Apply" {
				t.Logf("Deployment %s: our managedFields entry holds %d bytes of field set", d.Name, len(e.FieldsV1.GetRawBytes()))
			}
		}
	}

	_, before := writes.Snapshot()
	reconcilesBefore := reconcileCount(g)
	g.Expect(restartOperator()).To(Succeed())
	time.Sleep(6 * time.Second) // the initial reconcile of everything, then resyncs (2s)
	reconciles := reconcileCount(g) - reconcilesBefore
	got := writes.SinceIn(before, ns)
	// The start-up capability check asks the authorizer (SelfSubjectAccessReview, one per start
	// and per cluster RBAC kind): a question, nothing is stored.
	delete(got, "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
	t.Logf("%.0f reconciles after the restart; writes in %s and cluster-scoped: %v; all writes: %v", reconciles, ns, got, writes.Since(before))
	g.Expect(reconciles).To(BeNumerically(">=", 2*float64(len(names))), "the new operator must reconcile every collector")
	g.Expect(got).To(BeEmpty(), "a restart with nothing changed must not write")
}

// TestRestartRepairsWhatChangedWhileDown: while no operator runs, a generated field is edited, a
// generated ConfigMap loses its data, and a label is removed from the collector; the next
// operator repairs the first two and removes the label from every generated object.
func TestRestartRepairsWhatChangedWhileDown(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	convergeCollectors(t, ns, 1, map[string]string{"team": "payments", "tier": "gold"})
	const name = "r-deployment-0"
	dep := get(g, ns, name+"-collector", &appsv1.Deployment{})
	g.Expect(dep.Labels).To(HaveKeyWithValue("tier", "gold"))
	image := dep.Spec.Template.Spec.Containers[0].Image
	cms := &corev1.ConfigMapList{}
	g.Expect(k8s.List(ctx, cms, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": ns + "." + name})).To(Succeed())
	g.Expect(cms.Items).NotTo(BeEmpty())
	cm := cms.Items[0]

	stopOperator()
	dep.Spec.Template.Spec.Containers[0].Image = "example.invalid/tampered:1"
	g.Expect(k8s.Update(ctx, dep)).To(Succeed())
	for k := range cm.Data {
		cm.Data[k] = "tampered: true\n"
	}
	g.Expect(k8s.Update(ctx, &cm)).To(Succeed())
	col := get(g, ns, name, &v1beta1.OpenTelemetryCollector{})
	delete(col.Labels, "tier")
	g.Expect(k8s.Update(ctx, col)).To(Succeed())
	g.Expect(restartOperator()).To(Succeed())

	g.Eventually(func(g Gomega) {
		dep := get(g, ns, name+"-collector", &appsv1.Deployment{})
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		g.Expect(dep.Labels).NotTo(HaveKey("tier"))
		g.Expect(dep.Labels).To(HaveKeyWithValue("team", "payments"))
		g.Expect(dep.Spec.Template.Labels).NotTo(HaveKey("tier"))
		svc := get(g, ns, name+"-collector", &corev1.Service{})
		g.Expect(svc.Labels).NotTo(HaveKey("tier"))
		cur := get(g, ns, cm.Name, &corev1.ConfigMap{})
		for _, v := range cur.Data {
			g.Expect(v).NotTo(Equal("tampered: true\n"))
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	// The other collectors, untouched while the operator was down, stay as they were.
	other := get(g, ns, "r-statefulset-0-collector", &appsv1.StatefulSet{})
	g.Expect(other.Labels).To(HaveKeyWithValue("tier", "gold"))
}
