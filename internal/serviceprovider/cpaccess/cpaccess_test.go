package cpaccess

import (
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

func TestRotationDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	secret := func(exp string, token string) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{flux.TokenKey: []byte(token)}}
	}
	withExp := func(exp string) *corev1.Secret {
		s := secret(exp, "t")
		s.Annotations = map[string]string{ExpiresAnnotation: exp}
		return s
	}
	tests := []struct {
		name   string
		rot    Rotation
		secret *corev1.Secret
		want   bool
	}{
		{"no secret", Rotation{}, nil, true},
		{"no token", Rotation{}, &corev1.Secret{}, true},
		{"no expiry", Rotation{}, secret("", "t"), true},
		{"garbage expiry", Rotation{}, withExp("soon"), true},
		{"fresh 24h token", Rotation{}, withExp(now.Add(23 * time.Hour).Format(time.RFC3339)), false},
		{"past half life", Rotation{}, withExp(now.Add(11 * time.Hour).Format(time.RFC3339)), true},
		{"expired", Rotation{}, withExp(now.Add(-time.Minute).Format(time.RFC3339)), true},
		{"custom window not due", Rotation{TTL: time.Hour, RenewBefore: 10 * time.Minute}, withExp(now.Add(11 * time.Minute).Format(time.RFC3339)), false},
		{"custom window due", Rotation{TTL: time.Hour, RenewBefore: 10 * time.Minute}, withExp(now.Add(9 * time.Minute).Format(time.RFC3339)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.rot.Due(tt.secret, now)).To(Equal(tt.want))
		})
	}
}

func TestKubeconfigUsesTokenFile(t *testing.T) {
	g := NewWithT(t)
	raw, err := Kubeconfig("https://cp.example:6443", []byte("CA"))
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.Load(raw)
	g.Expect(err).NotTo(HaveOccurred())
	ctx := cfg.Contexts[cfg.CurrentContext]
	g.Expect(cfg.Clusters[ctx.Cluster].Server).To(Equal("https://cp.example:6443"))
	g.Expect(cfg.Clusters[ctx.Cluster].CertificateAuthorityData).To(Equal([]byte("CA")))
	auth := cfg.AuthInfos[ctx.AuthInfo]
	g.Expect(auth.Token).To(BeEmpty(), "an inline token is never re-read")
	g.Expect(auth.TokenFile).To(Equal(flux.CPAccessMountPath + "/token"))
}

func TestAccessSecretRoundTrip(t *testing.T) {
	g := NewWithT(t)
	exp := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	s := AccessSecret("ns", "id", []byte("kc"), []byte("ca"), Token{Value: "tok", Expires: exp, Holder: "h2"}, "h1")
	g.Expect(s.Name).To(Equal(instance.CPAccessSecret))
	g.Expect(s.Data).To(HaveKeyWithValue("token", []byte("tok")))
	g.Expect(s.Data).To(HaveKeyWithValue("ca.crt", []byte("ca")))
	// Mounted as the operator's ServiceAccount namespace file (flux.OperatorPatch).
	g.Expect(s.Data).To(HaveKeyWithValue(flux.NamespaceKey, []byte(instance.CPNamespace)))
	g.Expect(s.Annotations).To(HaveKeyWithValue(PreviousHolderAnnotation, "h1"))
	g.Expect(TokenFrom(s)).To(Equal(Token{Value: "tok", Expires: exp, Holder: "h2"}))
	g.Expect(Rotation{}.Due(s, exp.Add(-23*time.Hour))).To(BeFalse())
}

func TestCPObjects(t *testing.T) {
	g := NewWithT(t)
	objs := CPObjects("id", flux.OperatorNames{CertSecret: "cert", MutatingWebhook: "m", ValidatingWebhook: "v"})
	g.Expect(objs).To(HaveLen(6))
	crb := objs[3].(*rbacv1.ClusterRoleBinding)
	g.Expect(crb.RoleRef.Name).To(Equal(instance.CPClusterRole), "not cluster-admin")
	g.Expect(crb.Subjects[0].Name).To(Equal(instance.CPServiceAccount))
	rb := objs[5].(*rbacv1.RoleBinding)
	g.Expect(rb.Namespace).To(Equal(instance.CPNamespace))
	g.Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: instance.CPRole}))
	for _, o := range objs {
		g.Expect(o.GetLabels()).To(HaveKeyWithValue(instance.InstanceLabel, "id"))
	}
}

// The operator's control-plane rights are the shipped operator role (config/rbac/role.yaml),
// read independently here: the ClusterRole is its ClusterRole (so no cluster-wide Secrets) plus
// read access to the release's webhook configurations,
// the Role its Role with the release's certificate Secret name.
func TestOperatorRulesAreTheShippedRole(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile("../../../config/rbac/role.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	var cr rbacv1.ClusterRole
	var role rbacv1.Role
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		switch {
		case strings.Contains(doc, "kind: ClusterRole"):
			g.Expect(yaml.Unmarshal([]byte(doc), &cr)).To(Succeed())
		case strings.Contains(doc, "kind: Role"):
			g.Expect(yaml.Unmarshal([]byte(doc), &role)).To(Succeed())
		}
	}
	g.Expect(cr.Rules).NotTo(BeEmpty())
	g.Expect(role.Rules).NotTo(BeEmpty())

	objs := CPObjects("id", flux.OperatorNames{CertSecret: "my-cert", MutatingWebhook: "m", ValidatingWebhook: "v"})
	g.Expect(objs[2].(*rbacv1.ClusterRole).Rules).To(Equal(append(cr.Rules, WebhookConfigurationRules(flux.OperatorNames{MutatingWebhook: "m", ValidatingWebhook: "v"})...)),
		"the shipped ClusterRole plus reading the release's two webhook configurations")
	for _, r := range objs[2].(*rbacv1.ClusterRole).Rules {
		g.Expect(r.Resources).NotTo(ContainElement("secrets"), "no cluster-wide Secret access")
	}
	want := role.DeepCopy().Rules
	for i := range want {
		for j, n := range want[i].ResourceNames {
			if n == "opentelemetry-operator-webhook-cert" {
				want[i].ResourceNames[j] = "my-cert"
			}
		}
	}
	g.Expect(objs[4].(*rbacv1.Role).Rules).To(Equal(want))
	g.Expect(objs[4].(*rbacv1.Role).Namespace).To(Equal(instance.CPNamespace))
}
