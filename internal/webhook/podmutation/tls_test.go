package podmutation_test

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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1alpha1"
	shippedrbac "github.com/otelop/otelop/config/rbac"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// asShippedOperator returns a client that acts as the operator's ServiceAccount holding exactly
// the shipped RBAC (config/rbac/role.yaml: the manager ClusterRole, and the Role in the
// operator's own namespace), so that the API server refuses every read the shipped roles do not
// allow.
func asShippedOperator(t *testing.T) client.Client {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "operator-rbac", nil)
	const sa = "opentelemetry-operator-controller-manager"
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})).To(Succeed())
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}}
	cluster, namespaced := shippedrbac.OperatorRules()
	name := "shipped-manager-role-" + ns
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: cluster})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manager-role"}, Rules: namespaced})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manager-rolebinding"}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "manager-role"}})).To(Succeed())
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	// The roles are in force once the operator can read what they grant.
	g.Eventually(func() error {
		return c.List(ctx, &v1alpha1.InstrumentationList{}, client.InNamespace(ns))
	}).Should(Succeed())
	return c
}

// TestExporterTLSInjectedUnderShippedRBAC is the attack of issue 29, finding 5: an
// Instrumentation whose exporter uses TLS (a Secret with the client certificate, a ConfigMap with
// the CA). The webhook, reading as the operator's ServiceAccount with the shipped RBAC (no Secret
// rights outside its own namespace), used to read the Secret first, was refused ("forbidden") and
// left every such pod uninstrumented. It now mounts both by name, as upstream does: the pod is
// instrumented, its certificate variables point into the mounts, and nothing was read.
func TestExporterTLSInjectedUnderShippedRBAC(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	operator := asShippedOperator(t)
	ns := newNamespace(t, "tls-shipped", nil)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exporter-certs"},
		StringData: map[string]string{"tls.crt": "cert", "tls.key": "key"}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exporter-ca"},
		Data: map[string]string{"ca.crt": "ca"}})).To(Succeed())
	newInstrumentation(t, ns, "otel", func(i *v1alpha1.Instrumentation) {
		i.Spec.Exporter.Endpoint = "https://collector:4318"
		i.Spec.Exporter.TLS = &v1alpha1.TLS{SecretName: "exporter-certs", ConfigMapName: "exporter-ca",
			CA: "ca.crt", Cert: "tls.crt", Key: "tls.key"}
	})

	// Control: the shipped RBAC really is in force and has no Secret rights here.
	err := operator.Get(ctx, client.ObjectKey{Namespace: ns, Name: "exporter-certs"}, &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the shipped ClusterRole must not read Secrets: %v", err)

	h, err := podmutation.New(podmutation.Options{Manifests: manifests, Collectors: operator, APIReader: operator},
		admission.NewDecoder(scheme))
	g.Expect(err).NotTo(HaveOccurred())
	pod := newPod(ns, "app", map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "otel"})
	resp := h.Handle(ctx, request(t, pod))
	g.Expect(resp.Allowed).To(BeTrue())
	g.Expect(resp.Warnings).To(BeEmpty())
	patch, err := json.Marshal(resp.Patches)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(patch)).To(SatisfyAll(
		ContainSubstring(`javaagent.jar`),
		ContainSubstring(`"secretName":"exporter-certs"`),
		ContainSubstring(`"configMap":{"name":"exporter-ca"}`),
		ContainSubstring(`"value":"/otel-auto-instrumentation-configmap-exporter-ca/ca.crt"`),
		ContainSubstring(`"value":"/otel-auto-instrumentation-secret-exporter-certs/tls.crt"`),
		ContainSubstring(`"value":"/otel-auto-instrumentation-secret-exporter-certs/tls.key"`),
		ContainSubstring(`"mountPath":"/otel-auto-instrumentation-secret-exporter-certs"`),
	), "the pod is instrumented with the TLS material mounted by name")
}

// TestExporterTLSMissingSecretMountedByName: a Secret that does not exist is mounted by name all
// the same (upstream's behaviour); the kubelet reports it on the pod, and the pod starts once it
// exists. The webhook cannot tell, since it may not read Secrets.
func TestExporterTLSMissingSecretMountedByName(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "tls-missing", nil)
	newInstrumentation(t, ns, "otel", func(i *v1alpha1.Instrumentation) {
		i.Spec.Exporter.TLS = &v1alpha1.TLS{SecretName: "not-yet", CA: "ca.crt"}
	})
	got, warnings := create(t, newPod(ns, "p", map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "otel"}))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(got.Annotations).To(HaveKey(instrumentation.InjectedAnnotation))
	g.Expect(got.Spec.Volumes).To(ContainElement(SatisfyAll(
		HaveField("Name", "otel-auto-secret-not-yet"),
		HaveField("Secret.SecretName", "not-yet"))))
	g.Expect(envValue(got.Spec.Containers[0], "OTEL_EXPORTER_OTLP_CERTIFICATE")).To(Equal("/otel-auto-instrumentation-secret-not-yet/ca.crt"))
}
