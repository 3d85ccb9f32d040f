// Package cpaccess gives the workload operator its access to the control plane (CP): the CP
// ServiceAccount and RBAC, and a kubeconfig Secret for the workload cluster whose token the
// provider rotates before it expires. The kubeconfig reads the token from a file (tokenFile), which
// client-go re-reads, so a running operator follows the rotation; an inline token would be read
// once and stop working when it expires.
package cpaccess

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	shippedrbac "github.com/otelop/otelop/config/rbac"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// OperatorRules are the workload operator's cluster-wide rights in the control plane: exactly the
// rules of the operator's shipped ClusterRole (config/rbac/role.yaml), so they cannot drift from
// what the operator needs, and no Secret access outside its namespace.
func OperatorRules() []rbacv1.PolicyRule {
	cluster, _ := shippedrbac.OperatorRules()
	return cluster
}

// OperatorNamespaceRules are the operator's rights in its control-plane namespace: the shipped
// Role's rules (its webhook certificate Secret and its leader-election Lease), with the Secret name
// that the workload release gives the operator (flux.CertSecretName).
func OperatorNamespaceRules(certSecret string) []rbacv1.PolicyRule {
	_, ns := shippedrbac.OperatorRules()
	for i := range ns {
		for j, n := range ns[i].ResourceNames {
			if n == shippedrbac.WebhookCertSecretName {
				ns[i].ResourceNames[j] = certSecret
			}
		}
	}
	return ns
}

// WebhookConfigurationRules let the operator read the webhook configurations its release names
// (flux.OperatorNames). They exist in the workload cluster, not in the control plane, so the
// operator's certificate rotator finds none there and goes on; without the rule its startup sync
// fails with Forbidden. The shipped ClusterRole names upstream's default configurations instead.
func WebhookConfigurationRules(names flux.OperatorNames) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"}, ResourceNames: []string{names.MutatingWebhook}, Verbs: []string{"get"}},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations"}, ResourceNames: []string{names.ValidatingWebhook}, Verbs: []string{"get"}},
	}
}

// CPObjects are the control-plane objects of the workload operator's identity, in apply order:
// the ClusterRole has the shipped ClusterRole's rules plus WebhookConfigurationRules, the Role the
// shipped Role's with the release's certificate Secret name.
func CPObjects(id string, names flux.OperatorNames) []metav1.Object {
	labels := instance.Labels(id)
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	return []metav1.Object{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta(instance.CPNamespace, "")},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(instance.CPServiceAccount, instance.CPNamespace)},
		&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta(instance.CPClusterRole, ""), Rules: append(OperatorRules(), WebhookConfigurationRules(names)...)},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: meta(instance.CPClusterRoleBinding, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: instance.CPClusterRole},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: instance.CPServiceAccount, Namespace: instance.CPNamespace}},
		},
		&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta(instance.CPRole, instance.CPNamespace), Rules: OperatorNamespaceRules(names.CertSecret)},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(instance.CPRoleBinding, instance.CPNamespace),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: instance.CPRole},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: instance.CPServiceAccount, Namespace: instance.CPNamespace}},
		},
	}
}

// Kubeconfig renders the kubeconfig of the workload operator. It names no token, only the file the
// token is mounted at, so client-go picks up every rotation without a restart.
func Kubeconfig(host string, caData []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["control-plane"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caData}
	cfg.AuthInfos["otel-operator"] = &clientcmdapi.AuthInfo{TokenFile: flux.CPAccessMountPath + "/" + flux.TokenKey}
	cfg.Contexts["control-plane"] = &clientcmdapi.Context{Cluster: "control-plane", AuthInfo: "otel-operator", Namespace: instance.CPNamespace}
	cfg.CurrentContext = "control-plane"
	return clientcmd.Write(*cfg)
}
