package simprovider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	commonapi "github.com/openmcp-project/openmcp-operator/api/common"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/testenv"
)

// accessNamespace holds the ServiceAccounts the simulated provider creates on target clusters.
const accessNamespace = "openmcp-access"

// Provider answers ClusterRequests and AccessRequests on the platform API server, as the
// openmcp-operator scheduler and a cluster provider would.
type Provider struct {
	// World are the API servers.
	World *World
	// TokenTTL of the AccessRequest tokens; default 1h.
	TokenTTL time.Duration
	// Interval between passes; default 200ms.
	Interval time.Duration
	// Errors receives pass errors (may be nil).
	Errors func(error)
}

// Run answers requests until ctx ends.
func (p *Provider) Run(ctx context.Context) {
	iv := p.Interval
	if iv <= 0 {
		iv = 200 * time.Millisecond
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		if err := p.Pass(ctx); err != nil && p.Errors != nil && ctx.Err() == nil {
			p.Errors(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass grants every pending ClusterRequest, then every pending AccessRequest.
func (p *Provider) Pass(ctx context.Context) error {
	pc := p.World.Platform.Client
	var crs clustersv1alpha1.ClusterRequestList
	if err := pc.List(ctx, &crs); err != nil {
		return err
	}
	for i := range crs.Items {
		cr := &crs.Items[i]
		if cr.Status.IsGranted() || !cr.DeletionTimestamp.IsZero() {
			continue
		}
		cr.Status.Phase = clustersv1alpha1.REQUEST_GRANTED
		cr.Status.ObservedGeneration = cr.Generation
		cr.Status.Cluster = &commonapi.ObjectReference{Name: cr.Spec.Purpose, Namespace: "clusters"}
		if err := pc.Status().Update(ctx, cr); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("granting ClusterRequest %s/%s: %w", cr.Namespace, cr.Name, err)
		}
	}
	var ars clustersv1alpha1.AccessRequestList
	if err := pc.List(ctx, &ars); err != nil {
		return err
	}
	for i := range ars.Items {
		ar := &ars.Items[i]
		if !ar.DeletionTimestamp.IsZero() || (ar.Status.IsGranted() && ar.Status.ObservedGeneration == ar.Generation) {
			continue
		}
		if err := p.grant(ctx, ar); err != nil {
			return fmt.Errorf("granting AccessRequest %s/%s: %w", ar.Namespace, ar.Name, err)
		}
	}
	return nil
}

// target finds the API server an AccessRequest is for, from the purpose of its ClusterRequest.
func (p *Provider) target(ctx context.Context, ar *clustersv1alpha1.AccessRequest) (*testenv.Env, error) {
	purpose := ""
	switch {
	case ar.Spec.RequestRef != nil:
		cr := &clustersv1alpha1.ClusterRequest{}
		if err := p.World.Platform.Client.Get(ctx, client.ObjectKey{Namespace: ar.Spec.RequestRef.Namespace, Name: ar.Spec.RequestRef.Name}, cr); err != nil {
			return nil, err
		}
		purpose = cr.Spec.Purpose
	case ar.Spec.ClusterRef != nil:
		purpose = ar.Spec.ClusterRef.Name
	}
	switch purpose {
	case clustersv1alpha1.PURPOSE_ONBOARDING:
		return p.World.Onboarding, nil
	case clustersv1alpha1.PURPOSE_WORKLOAD:
		return p.World.Workload, nil
	case PurposeMCP:
		return p.World.CP, nil
	case "platform":
		return p.World.Platform, nil
	}
	return nil, fmt.Errorf("no cluster for purpose %q", purpose)
}

// grant creates a ServiceAccount with the requested permissions on the target, a token for it,
// and the kubeconfig Secret, then marks the request Granted.
func (p *Provider) grant(ctx context.Context, ar *clustersv1alpha1.AccessRequest) error {
	env, err := p.target(ctx, ar)
	if err != nil {
		return err
	}
	tc := env.Client
	sum := sha256.Sum256([]byte(ar.Namespace + "/" + ar.Name))
	name := "ar-" + hex.EncodeToString(sum[:])[:16]
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: accessNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: accessNamespace}},
	} {
		if err := tc.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: accessNamespace}}
	if ar.Spec.Token != nil {
		for i, perm := range ar.Spec.Token.Permissions {
			pname := name + "-" + strconv.Itoa(i)
			if perm.Namespace == "" {
				err = createAll(ctx, tc,
					&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: pname}, Rules: perm.Rules},
					&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: pname}, Subjects: subject,
						RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: pname}})
			} else {
				err = createAll(ctx, tc,
					&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: perm.Namespace}},
					&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: perm.Namespace}, Rules: perm.Rules},
					&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: perm.Namespace}, Subjects: subject,
						RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: pname}})
			}
			if err != nil {
				return err
			}
		}
		for i, ref := range ar.Spec.Token.RoleRefs {
			rname := name + "-ref-" + strconv.Itoa(i)
			if ref.Namespace == "" {
				err = createAll(ctx, tc, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: rname}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ref.Name}})
			} else {
				err = createAll(ctx, tc, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: rname, Namespace: ref.Namespace}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: ref.Kind, Name: ref.Name}})
			}
			if err != nil {
				return err
			}
		}
	}
	ttl := p.TokenTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl.Seconds()))}}
	if err := tc.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: accessNamespace}}, tr); err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ar.Name + ".kubeconfig", Namespace: ar.Namespace}}
	data := map[string][]byte{
		"kubeconfig":          raw,
		"token":               []byte(tr.Status.Token),
		"host":                []byte(env.Config.Host),
		"ca.crt":              env.Config.CAData,
		"creationTimestamp":   []byte(strconv.FormatInt(time.Now().Unix(), 10)),
		"expirationTimestamp": []byte(strconv.FormatInt(tr.Status.ExpirationTimestamp.Unix(), 10)),
	}
	if err := p.World.Platform.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		secret.Data = data
		if err := p.World.Platform.Client.Create(ctx, secret); err != nil {
			return err
		}
	} else {
		secret.Data = data
		if err := p.World.Platform.Client.Update(ctx, secret); err != nil {
			return err
		}
	}
	ar.Status.Phase = clustersv1alpha1.REQUEST_GRANTED
	ar.Status.ObservedGeneration = ar.Generation
	ar.Status.SecretRef = &commonapi.LocalObjectReference{Name: secret.Name}
	if err := p.World.Platform.Client.Status().Update(ctx, ar); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

func createAll(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, o := range objs {
		if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return nil
}
