package cpaccess

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// Annotations on the workload access Secret.
const (
	// ExpiresAnnotation is the RFC 3339 expiry of the token in the Secret.
	ExpiresAnnotation = "oteloperator.services.open-control-plane.io/token-expires"
	// HolderAnnotation names the CP Secret the current token is bound to.
	HolderAnnotation = "oteloperator.services.open-control-plane.io/token-holder"
	// PreviousHolderAnnotation names the holder of the token before, kept valid for one rotation so
	// the kubelet has time to update the mounted file.
	PreviousHolderAnnotation = "oteloperator.services.open-control-plane.io/token-previous-holder"
	// HolderLabel marks the CP Secrets that tokens are bound to.
	HolderLabel = "oteloperator.services.open-control-plane.io/token-holder"
)

// DefaultTokenTTL is the lifetime asked for each token; it is rotated at half of it.
const DefaultTokenTTL = 24 * time.Hour

// Rotation decides when tokens are renewed.
type Rotation struct {
	// TTL is the lifetime requested for each token (the API server's minimum is 10m).
	TTL time.Duration
	// RenewBefore renews a token when less than this is left; zero means TTL/2.
	RenewBefore time.Duration
}

func (r Rotation) ttl() time.Duration {
	if r.TTL <= 0 {
		return DefaultTokenTTL
	}
	return r.TTL
}

func (r Rotation) renewBefore() time.Duration {
	if r.RenewBefore <= 0 {
		return r.ttl() / 2
	}
	return r.RenewBefore
}

// Due says whether the token in the access Secret must be renewed at now: it is missing, its expiry
// is missing or unreadable, or less than RenewBefore is left.
func (r Rotation) Due(secret *corev1.Secret, now time.Time) bool {
	if secret == nil || len(secret.Data[flux.TokenKey]) == 0 {
		return true
	}
	exp, err := time.Parse(time.RFC3339, secret.Annotations[ExpiresAnnotation])
	if err != nil {
		return true
	}
	return exp.Sub(now) < r.renewBefore()
}

// Token is a ServiceAccount token and what it is bound to.
type Token struct {
	// Value is the bearer token.
	Value string
	// Expires is when the API server stops accepting it.
	Expires time.Time
	// Holder is the CP Secret it is bound to; deleting the Secret revokes the token.
	Holder string
}

// Mint creates a holder Secret in the CP and a token of the operator's ServiceAccount bound to it,
// so that the provider can revoke the token later by deleting the holder.
func (r Rotation) Mint(ctx context.Context, cp client.Client, id string) (Token, error) {
	holder := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		GenerateName: instance.CPServiceAccount + "-token-",
		Namespace:    instance.CPNamespace,
		Labels:       map[string]string{HolderLabel: "true", instance.InstanceLabel: id, instance.ManagedByLabel: instance.ManagedByValue},
	}, Type: corev1.SecretTypeOpaque}
	if err := cp.Create(ctx, holder); err != nil {
		return Token{}, fmt.Errorf("creating token holder Secret in the control plane: %w", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: instance.CPServiceAccount, Namespace: instance.CPNamespace}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(r.ttl().Seconds())),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: holder.Name, UID: holder.UID},
	}}
	if err := cp.SubResource("token").Create(ctx, sa, tr); err != nil {
		_ = cp.Delete(ctx, holder)
		return Token{}, fmt.Errorf("requesting a token for ServiceAccount %s/%s in the control plane: %w", sa.Namespace, sa.Name, err)
	}
	return Token{Value: tr.Status.Token, Expires: tr.Status.ExpirationTimestamp.Time, Holder: holder.Name}, nil
}

// Revoke deletes every holder Secret of the instance except keep, revoking their tokens.
func Revoke(ctx context.Context, cp client.Client, id string, keep ...string) error {
	var list corev1.SecretList
	if err := cp.List(ctx, &list, client.InNamespace(instance.CPNamespace), client.MatchingLabels{HolderLabel: "true", instance.InstanceLabel: id}); err != nil {
		return fmt.Errorf("listing token holders in the control plane: %w", err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		if contains(keep, s.Name) {
			continue
		}
		if err := cp.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("revoking token holder %s/%s in the control plane: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// RevokeHolder deletes the holder Secret named holder of instance id, revoking its token; one
// that is gone already counts as revoked.
func RevokeHolder(ctx context.Context, cp client.Client, id, holder string) error {
	s := &corev1.Secret{}
	if err := cp.Get(ctx, client.ObjectKey{Namespace: instance.CPNamespace, Name: holder}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading token holder %s/%s in the control plane: %w", instance.CPNamespace, holder, err)
	}
	if s.Labels[HolderLabel] != "true" || s.Labels[instance.InstanceLabel] != id {
		return nil
	}
	uid := s.UID
	if err := cp.Delete(ctx, s, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("revoking token holder %s/%s in the control plane: %w", s.Namespace, s.Name, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e != "" && e == s {
			return true
		}
	}
	return false
}

// AccessSecret is the workload Secret the operator mounts: the kubeconfig, the current token it
// points at, the CP's CA, and the operator's namespace in the CP (mounted as its ServiceAccount
// namespace file, see flux.OperatorPatch). previousHolder is recorded so the next rotation can revoke it.
func AccessSecret(namespace, id string, kubeconfig []byte, caData []byte, tok Token, previousHolder string) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: instance.CPAccessSecret, Namespace: namespace, Labels: instance.Labels(id),
			Annotations: map[string]string{
				ExpiresAnnotation: tok.Expires.UTC().Format(time.RFC3339),
				HolderAnnotation:  tok.Holder,
			},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			flux.KubeconfigKey: kubeconfig,
			flux.TokenKey:      []byte(tok.Value),
			flux.NamespaceKey:  []byte(instance.CPNamespace),
		},
	}
	if len(caData) > 0 {
		s.Data[flux.CAKey] = caData
	}
	if previousHolder != "" {
		s.Annotations[PreviousHolderAnnotation] = previousHolder
	}
	return s
}

// TokenFrom reads the current token back from an access Secret.
func TokenFrom(s *corev1.Secret) Token {
	if s == nil {
		return Token{}
	}
	exp, _ := time.Parse(time.RFC3339, s.Annotations[ExpiresAnnotation])
	return Token{Value: string(s.Data[flux.TokenKey]), Expires: exp, Holder: s.Annotations[HolderAnnotation]}
}
