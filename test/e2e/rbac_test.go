package e2e

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/test/simcluster"
)

// operatorIdentity creates the operator's ServiceAccount bound to the ClusterRole and the
// namespaced Role generated in config/rbac/role.yaml (the Role in the operator's namespace,
// "default" here) and returns a connection as that ServiceAccount, so the e2e tests prove that the
// shipped RBAC is enough.
func operatorIdentity(ctx context.Context, admin *rest.Config, roleFile string) (*rest.Config, error) {
	objs, err := simcluster.ReadManifestFile(roleFile)
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "opentelemetry-operator", Namespace: "default"}}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}}
	create := []client.Object{sa}
	for _, u := range objs {
		switch u.GetKind() {
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				return nil, fmt.Errorf("%s: %w", roleFile, err)
			}
			role.Name = "opentelemetry-operator-" + role.Name
			create = append(create, role, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "opentelemetry-operator-manager-rolebinding"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
				Subjects:   subjects,
			})
		case "Role":
			role := &rbacv1.Role{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				return nil, fmt.Errorf("%s: %w", roleFile, err)
			}
			role.Name, role.Namespace = "opentelemetry-operator-"+role.Name, sa.Namespace
			create = append(create, role, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "opentelemetry-operator-manager-rolebinding", Namespace: sa.Namespace},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
				Subjects:   subjects,
			})
		default:
			return nil, fmt.Errorf("%s: unexpected %s", roleFile, u.GetKind())
		}
	}
	for _, obj := range create {
		if err := k8s.Create(ctx, obj); err != nil {
			return nil, err
		}
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

func ptr[T any](v T) *T { return &v }

// roleFile is the operator's generated ClusterRole.
func roleFile(root string) string { return filepath.Join(root, "config", "rbac", "role.yaml") }
