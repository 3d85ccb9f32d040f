package webhook

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
)

const otlpDebug = `{"receivers":{"otlp":{"protocols":{"grpc":{}}}},"exporters":{"debug":{}},
"service":{"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`

// k8sattributes makes the operator grant the collector's ServiceAccount cluster-wide reads.
const k8sAttributes = `{"receivers":{"otlp":{"protocols":{"grpc":{}}}},"processors":{"k8sattributes":{}},"exporters":{"debug":{}},
"service":{"pipelines":{"traces":{"receivers":["otlp"],"processors":["k8sattributes"],"exporters":["debug"]}}}}`

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "webhook-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func newCollector(t *testing.T, ns, name, config string, mode v1beta1.Mode) *v1beta1.OpenTelemetryCollector {
	t.Helper()
	c := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.Mode = mode
	if err := json.Unmarshal([]byte(config), &c.Spec.Config); err != nil {
		t.Fatal(err)
	}
	return c
}

// causes returns the field paths of an Invalid/Forbidden status error.
func causes(err error) []string {
	var out []string
	if se, ok := err.(apierrors.APIStatus); ok && se.Status().Details != nil {
		for _, c := range se.Status().Details.Causes {
			out = append(out, c.Field)
		}
	}
	return out
}

func TestCreateDefaultsEveryMode(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	for _, mode := range []v1beta1.Mode{"", v1beta1.ModeDaemonSet, v1beta1.ModeStatefulSet, v1beta1.ModeSidecar} {
		name := "c-" + string(mode)
		if mode == "" {
			name = "c-default"
		}
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := newCollector(t, ns, name, otlpDebug, mode)

			// sideEffects None: a dry run is admitted and stores nothing.
			g.Expect(env.Client.Create(ctx, c.DeepCopy(), client.DryRunAll)).To(Succeed())
			g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), &v1beta1.OpenTelemetryCollector{}))).To(BeTrue())

			g.Expect(env.Client.Create(ctx, c)).To(Succeed())
			got := &v1beta1.OpenTelemetryCollector{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
			if mode == "" {
				g.Expect(got.Spec.Mode).To(Equal(v1beta1.ModeDeployment))
			} else {
				g.Expect(got.Spec.Mode).To(Equal(mode))
			}
			g.Expect(got.Spec.Replicas).To(Equal(ptr.To[int32](1)))
			g.Expect(got.Spec.UpgradeStrategy).To(Equal(v1beta1.UpgradeStrategyAutomatic))
			g.Expect(got.Spec.ManagementState).To(Equal(v1beta1.ManagementStateManaged))
			grpc := got.Spec.Config.Receivers.Object["otlp"].(map[string]any)["protocols"].(map[string]any)["grpc"]
			g.Expect(grpc).To(HaveKeyWithValue("endpoint", "0.0.0.0:4317"))

			// Defaulting is idempotent: a metadata-only update does not change the spec.
			gen := got.Generation
			got.Labels = map[string]string{"touched": "yes"}
			g.Expect(env.Client.Update(ctx, got)).To(Succeed())
			g.Expect(got.Generation).To(Equal(gen))

			// Delete is never blocked.
			g.Expect(env.Client.Delete(ctx, got)).To(Succeed())
		})
	}
}

func TestModeChangeRejected(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCollector(t, namespace(t), "modes", otlpDebug, v1beta1.ModeDeployment)
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	c.Spec.Mode = v1beta1.ModeDaemonSet
	err := env.Client.Update(ctx, c)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(causes(err)).To(ContainElement("spec.mode"))
}

func TestInvalidCollectorListsEveryProblem(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCollector(t, namespace(t), "bad",
		`{"receivers":{"otlp":{"protocols":{"grpc":{}}}},"exporters":{"debug":{}},"service":{"pipelines":{"traces":{"receivers":["otlp","missing"],"exporters":["debug"]}}}}`,
		v1beta1.ModeDeployment)
	c.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	c.Spec.Autoscaler = &v1beta1.AutoscalerSpec{MinReplicas: ptr.To[int32](2)}
	c.Spec.Ingress = v1beta1.Ingress{Type: v1beta1.IngressTypeIngress, RuleType: v1beta1.IngressRuleTypeSubdomain}
	err := env.Client.Create(ctx, c)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(causes(err)).To(ContainElements(
		"spec.config.service.pipelines.traces.receivers[1]",
		"spec.volumeClaimTemplates",
		"spec.autoscaler.maxReplicas",
		"spec.ingress.hostname",
	))
}

func TestV1alpha1AndV1beta1ReadEachOther(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)

	alpha := &v1alpha1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alpha"}}
	alpha.Spec.Mode = v1alpha1.ModeStatefulSet
	alpha.Spec.Config = "receivers:\n  otlp:\n    protocols:\n      grpc: {}\nexporters:\n  debug: {}\nservice:\n  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [debug]\n"
	g.Expect(env.Client.Create(ctx, alpha)).To(Succeed())
	beta := &v1beta1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(alpha), beta)).To(Succeed())
	g.Expect(beta.Spec.Mode).To(Equal(v1beta1.ModeStatefulSet))
	// The v1alpha1 request went through conversion and the v1beta1 defaulter.
	g.Expect(beta.Spec.Config.Receivers.Object["otlp"].(map[string]any)["protocols"].(map[string]any)["grpc"]).
		To(HaveKeyWithValue("endpoint", "0.0.0.0:4317"))

	c := newCollector(t, ns, "beta", otlpDebug, v1beta1.ModeDaemonSet)
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	back := &v1alpha1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), back)).To(Succeed())
	g.Expect(string(back.Spec.Mode)).To(Equal(string(v1beta1.ModeDaemonSet)))
	g.Expect(back.Spec.Config).To(ContainSubstring("0.0.0.0:4317"))
}

func TestPrivilegeEscalationIsRejected(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)

	// A namespace editor of collectors, with no cluster-wide rights.
	userName := "alice-" + ns
	user, err := env.Environment.AddUser(envtest.User{Name: userName}, env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "collector-editor"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"opentelemetry.io"}, Resources: []string{"opentelemetrycollectors"}, Verbs: []string{"*"}}}}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, Name: userName}
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alice"},
		Subjects: []rbacv1.Subject{subject}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}})).To(Succeed())
	alice, err := client.New(user.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// No generated RBAC: allowed.
	g.Expect(alice.Create(ctx, newCollector(t, ns, "plain", otlpDebug, v1beta1.ModeDeployment))).To(Succeed())

	// k8sattributes would grant the ServiceAccount reads alice does not have: rejected, also on dry run.
	c := newCollector(t, ns, "k8sattr", k8sAttributes, v1beta1.ModeDeployment)
	for _, opts := range [][]client.CreateOption{{client.DryRunAll}, nil} {
		err = alice.Create(ctx, c.DeepCopy(), opts...)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ContainElement("spec.config"))
		g.Expect(err.Error()).To(ContainSubstring("pods"))
	}
	// Adding the component to an existing collector is rejected the same way.
	plain := &v1beta1.OpenTelemetryCollector{}
	g.Expect(alice.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain"}, plain)).To(Succeed())
	g.Expect(json.Unmarshal([]byte(k8sAttributes), &plain.Spec.Config)).To(Succeed())
	g.Expect(apierrors.IsInvalid(alice.Update(ctx, plain))).To(BeTrue())

	// Once alice holds those permissions herself, she may create it.
	raw := map[string]any{}
	g.Expect(json.Unmarshal([]byte(k8sAttributes), &raw)).To(Succeed())
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "k8sattributes-" + ns},
		Rules: collectorconfig.RBACRules(collectorconfig.Parse(raw))}
	g.Expect(cr.Rules).NotTo(BeEmpty())
	g.Expect(env.Client.Create(ctx, cr)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
		Subjects: []rbacv1.Subject{subject}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name}})).To(Succeed())
	g.Eventually(func() error { return alice.Create(ctx, c.DeepCopy()) }).Should(Succeed())
}

type warnings struct{ texts []string }

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) { w.texts = append(w.texts, text) }

func TestPrometheusCRWithoutPermissionsWarns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	got := &warnings{}
	cfg.WarningHandler = got
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	col := newCollector(t, namespace(t), "ta", `{"receivers":{"prometheus":{"config":{}}},"exporters":{"debug":{}},
"service":{"pipelines":{"metrics":{"receivers":["prometheus"],"exporters":["debug"]}}}}`, v1beta1.ModeStatefulSet)
	col.Spec.TargetAllocator.Enabled = true
	col.Spec.TargetAllocator.PrometheusCR.Enabled = true
	g.Expect(c.Create(ctx, col)).To(Succeed())
	g.Expect(got.texts).To(ContainElement(And(ContainSubstring("ta-targetallocator"), ContainSubstring("servicemonitors"))))
}
