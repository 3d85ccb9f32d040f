package bridge

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelop/otelop/internal/opampbridge/identity"
)

func metaFor(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

// ensureLease creates the leader-election Lease before client-go's elector would, labelled as the
// bridge's and owned by the OpAMPBridge resource (owner may be nil), or adds the owner to an
// existing one. Only get, create and update are used: the verbs leader election needs anyway.
func ensureLease(ctx context.Context, cs kubernetes.Interface, namespace, name string, owner *metav1.OwnerReference) error {
	leases := cs.CoordinationV1().Leases(namespace)
	l := &coordinationv1.Lease{ObjectMeta: metaFor(namespace, name)}
	l.Labels = map[string]string{identity.ManagedByLabel: identity.ManagedByValue}
	if owner != nil {
		l.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	_, err := leases.Create(ctx, l, metav1.CreateOptions{FieldManager: identity.FieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if owner == nil {
		return nil
	}
	live, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil || identity.HasOwner(live, owner) {
		return err
	}
	live.OwnerReferences = append(live.OwnerReferences, *owner)
	_, err = leases.Update(ctx, live, metav1.UpdateOptions{FieldManager: identity.FieldManager})
	return err
}
