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

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// OperatorRules are what the OpenTelemetry Operator needs in the control plane it manages: its own
// API group, the workloads and config it creates for collectors, target allocators and bridges,
// RBAC for their service accounts, monitoring resources, and leader election.
var OperatorRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"opentelemetry.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps", "events", "namespaces", "pods", "secrets", "serviceaccounts", "services", "persistentvolumeclaims", "persistentvolumes", "nodes", "endpoints"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "statefulsets", "replicasets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "networkpolicies"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"route.openshift.io"}, Resources: []string{"routes", "routes/custom-host"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"servicemonitors", "podmonitors"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"config.openshift.io"}, Resources: []string{"infrastructures", "infrastructures/status"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}

// CPObjects are the control-plane objects of the workload operator's identity, in apply order.
func CPObjects(id string) []metav1.Object {
	labels := instance.Labels(id)
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	return []metav1.Object{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta(instance.CPNamespace, "")},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(instance.CPServiceAccount, instance.CPNamespace)},
		&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta(instance.CPClusterRole, ""), Rules: OperatorRules},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: meta(instance.CPClusterRoleBinding, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: instance.CPClusterRole},
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
