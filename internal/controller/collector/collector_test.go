package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
)

const (
	timeout = 30 * time.Second
	poll    = 100 * time.Millisecond
)

const otlpConfig = `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "0.0.0.0:4317"}
      http: {endpoint: "0.0.0.0:4318"}
processors:
  batch: {}
exporters:
  debug: {}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [debug]}
`

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "col-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func newCollector(t *testing.T, ns, name string, mode v1beta1.Mode, config string) *v1beta1.OpenTelemetryCollector {
	t.Helper()
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	col.Spec.Mode = mode
	// No defaulting webhook in this suite: set what it would.
	col.Spec.UpgradeStrategy = v1beta1.UpgradeStrategyAutomatic
	col.Spec.ManagementState = v1beta1.ManagementStateManaged
	if err := yaml.Unmarshal([]byte(config), &col.Spec.Config); err != nil {
		t.Fatal(err)
	}
	return col
}

func get[T client.Object](g Gomega, ns, name string, obj T) T {
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)).To(Succeed())
	return obj
}

func readyCondition(g Gomega, col *v1beta1.OpenTelemetryCollector) *metav1.Condition {
	cur := get(g, col.Namespace, col.Name, &v1beta1.OpenTelemetryCollector{})
	c := meta.FindStatusCondition(cur.Status.Conditions, v1beta1.ConditionReady)
	g.Expect(c).NotTo(BeNil(), "no Ready condition yet")
	return c
}

func TestDeploymentCollectorLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "simple", v1beta1.ModeDeployment, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())

	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		get(g, ns, "simple-collector", dep)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(dep.OwnerReferences).To(ContainElement(HaveField("UID", col.UID)))
	g.Expect(dep.Spec.Template.Spec.Containers[0].Name).To(Equal("otc-container"))
	// The objects are created one after another: the Deployment being there does not mean the rest are.
	g.Eventually(func(g Gomega) {
		for _, name := range []string{"simple-collector", "simple-collector-headless", "simple-collector-monitoring"} {
			get(g, ns, name, &corev1.Service{})
		}
		get(g, ns, "simple-collector", &corev1.ServiceAccount{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// No kubelet in envtest: the Deployment never becomes available, so Ready is False and says why.
	g.Eventually(func(g Gomega) {
		c := readyCondition(g, col)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(BeElementOf(v1beta1.ReasonProgressing, v1beta1.ReasonWorkloadUnavailable))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Pods become available (the status a kube-controller-manager would write): Ready turns True.
	setAvailable(g, ns, "simple-collector")
	g.Eventually(func(g Gomega) {
		c := readyCondition(g, col)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		cur := get(g, ns, "simple", &v1beta1.OpenTelemetryCollector{})
		g.Expect(cur.Status.Scale.StatusReplicas).To(Equal("1/1"))
		g.Expect(cur.Status.Scale.Selector).To(ContainSubstring("app.kubernetes.io/instance=" + ns + ".simple"))
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		g.Expect(cur.Status.Image).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

func TestEveryModeCreatesItsWorkload(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		mode v1beta1.Mode
		obj  client.Object
	}{
		{v1beta1.ModeDeployment, &appsv1.Deployment{}},
		{v1beta1.ModeDaemonSet, &appsv1.DaemonSet{}},
		{v1beta1.ModeStatefulSet, &appsv1.StatefulSet{}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			g := NewWithT(t)
			name := "m-" + string(tc.mode)
			g.Expect(k8s.Create(context.Background(), newCollector(t, ns, name, tc.mode, otlpConfig))).To(Succeed())
			g.Eventually(func(g Gomega) { get(g, ns, name+"-collector", tc.obj) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
		})
	}
	t.Run("sidecar", func(t *testing.T) {
		g := NewWithT(t)
		col := newCollector(t, ns, "m-sidecar", v1beta1.ModeSidecar, otlpConfig)
		g.Expect(k8s.Create(context.Background(), col)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(readyCondition(g, col).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
		cms := &corev1.ConfigMapList{}
		g.Expect(k8s.List(context.Background(), cms, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": ns + ".m-sidecar"})).To(Succeed())
		g.Expect(cms.Items).To(HaveLen(1), "sidecar mode still gets its config ConfigMap")
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "m-sidecar-collector"}, &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	})
}

func TestUnmanagedCollectorIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "hands-off", v1beta1.ModeDeployment, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) { get(g, ns, "hands-off-collector", dep) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	get(g, ns, "hands-off", col)
	col.Spec.ManagementState = v1beta1.ManagementStateUnmanaged
	col.Spec.Replicas = ptrInt32(5)
	g.Expect(k8s.Update(ctx, col)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(*get(g, ns, "hands-off-collector", &appsv1.Deployment{}).Spec.Replicas).To(Equal(int32(1)))
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

func ptrInt32(v int32) *int32 { return &v }

func TestPruneWhenFeaturesAreRemoved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "feat", v1beta1.ModeDeployment, otlpConfig)
	col.Spec.Autoscaler = &v1beta1.AutoscalerSpec{MinReplicas: ptrInt32(1), MaxReplicas: ptrInt32(3)}
	col.Spec.Ingress = v1beta1.Ingress{Type: v1beta1.IngressTypeIngress, Hostname: "otel.example.test"}
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, ns, "feat-collector", &autoscalingv2.HorizontalPodAutoscaler{})
		get(g, ns, "feat-ingress", &networkingv1.Ingress{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The status may move between the read and the update (a write of the controller's): retry.
	g.Eventually(func() error {
		get(g, ns, "feat", col)
		col.Spec.Autoscaler = nil
		col.Spec.Ingress = v1beta1.Ingress{}
		return k8s.Update(ctx, col)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "feat-collector"}, &autoscalingv2.HorizontalPodAutoscaler{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "HPA pruned")
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "feat-ingress"}, &networkingv1.Ingress{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Ingress pruned")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	get(g, ns, "feat-collector", &appsv1.Deployment{})
}

func TestUserObjectsAreNeverPruned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// A user's ConfigMap that even carries our managed-by label but is not owned by the collector.
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "users-own", Namespace: ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator"}}}
	g.Expect(k8s.Create(ctx, mine)).To(Succeed())
	g.Expect(k8s.Create(ctx, newCollector(t, ns, "neighbour", v1beta1.ModeDeployment, otlpConfig))).To(Succeed())
	g.Eventually(func(g Gomega) { get(g, ns, "neighbour-collector", &appsv1.Deployment{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) { get(g, ns, "users-own", &corev1.ConfigMap{}) }).WithTimeout(3 * time.Second).Should(Succeed())
}

func TestConfigChangeKeepsOldConfigMaps(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "versions", v1beta1.ModeDeployment, otlpConfig)
	col.Spec.ConfigVersions = 2
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	configMaps := func(g Gomega) []corev1.ConfigMap {
		l := &corev1.ConfigMapList{}
		g.Expect(k8s.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": ns + ".versions"})).To(Succeed())
		return l.Items
	}
	g.Eventually(func(g Gomega) { g.Expect(configMaps(g)).To(HaveLen(1)) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for i := range 4 {
		get(g, ns, "versions", col)
		col.Spec.Config.Exporters.Object["debug"] = map[string]any{"verbosity": []string{"basic", "normal", "detailed", "basic"}[i]}
		if i == 3 {
			col.Spec.Config.Exporters.Object["debug"] = map[string]any{"sampling_initial": 7}
		}
		g.Expect(k8s.Update(ctx, col)).To(Succeed())
		want := min(i+2, 3) // the current one plus at most configVersions older ones
		g.Eventually(func(g Gomega) { g.Expect(configMaps(g)).To(HaveLen(want)) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
		time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	}
}

func TestImmutableFieldChangeRecreatesStatefulSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	col := newCollector(t, ns, "sts", v1beta1.ModeStatefulSet, otlpConfig)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	sts := &appsv1.StatefulSet{}
	g.Eventually(func(g Gomega) { get(g, ns, "sts-collector", sts) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	oldUID := sts.UID

	get(g, ns, "sts", col)
	col.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: mustQuantity("1Gi")}}},
	}}
	g.Expect(k8s.Update(ctx, col)).To(Succeed())
	// The selector is unchanged, so the pods are orphaned (adopted by the new StatefulSet) rather
	// than all deleted at once. envtest runs no garbage collector: finish the orphaning as it would.
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "sts-collector", &appsv1.StatefulSet{})
		g.Expect(cur.UID).To(Equal(oldUID))
		g.Expect(cur.DeletionTimestamp).NotTo(BeNil())
		g.Expect(cur.Finalizers).To(ContainElement(metav1.FinalizerOrphanDependents))
		cur.Finalizers = nil
		g.Expect(k8s.Update(ctx, cur)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cur := get(g, ns, "sts-collector", &appsv1.StatefulSet{})
		g.Expect(cur.UID).NotTo(Equal(oldUID))
		g.Expect(cur.Spec.VolumeClaimTemplates).To(HaveLen(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

func TestClusterRBACIsCreatedAndCleanedUpWithTheFinalizer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cfg := `
receivers:
  otlp:
    protocols: {grpc: {endpoint: "0.0.0.0:4317"}}
processors:
  k8sattributes: {}
exporters:
  debug: {}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [k8sattributes], exporters: [debug]}
`
	col := newCollector(t, ns, "attrs", v1beta1.ModeDeployment, cfg)
	g.Expect(k8s.Create(ctx, col)).To(Succeed())
	roleName := fmt.Sprintf("attrs-%s-cluster-role", ns)
	role := &rbacv1.ClusterRole{}
	g.Eventually(func(g Gomega) {
		get(g, "", roleName, role)
		get(g, ns, "attrs", col)
		g.Expect(col.Finalizers).To(ContainElement("opentelemetrycollector.opentelemetry.io/finalizer"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(role.Rules).To(ContainElement(HaveField("Resources", ContainElement("pods"))))

	g.Expect(k8s.Delete(ctx, col)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Name: roleName}, &rbacv1.ClusterRole{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ClusterRole removed")
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "attrs"}, &v1beta1.OpenTelemetryCollector{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "collector gone once the finalizer ran")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
