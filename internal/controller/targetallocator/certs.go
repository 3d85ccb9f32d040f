package targetallocator

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
	"github.com/otelop/otelop/internal/webhook/certs"
)

// Validities of the target allocators' mutual TLS certificates: the webhook certificate's
// defaults, renewed by the same rule (a third of the validity left).
const (
	DefaultCertValidity   = certs.DefaultValidity
	DefaultCACertValidity = certs.DefaultCAValidity
)

// issuer keeps the mutual TLS material of target allocators: a CA per target allocator in
// "<name>-ca-cert", the serving certificate in "<name>-ta-server-cert" and the collectors' client
// certificate in "<name>-ta-client-cert". Each is kept while valid and renewed when a third of its
// validity is left. A renewed CA stays in the ca.crt bundles until it expires, and the certificates
// it issued are kept until their own renewal, so peers keep trusting each other across the change.
type issuer struct {
	// reader reads Secrets from the API server (they are not in the cache, which holds only
	// metadata).
	reader client.Reader
	// validity of the serving and client certificates, caValidity of the CA.
	validity, caValidity time.Duration
	now                  func() time.Time
}

// material returns the data of the three Secrets for ta and when the next renewal is due. A
// Secret that exists and is not controlled by ta (cert-manager's, or the user's) gets nil data: it
// is left alone and mounted as it is.
func (i issuer) material(ctx context.Context, ta *v1alpha1.TargetAllocator) (mta.CertSecrets, time.Time, error) {
	now := i.now()
	var out mta.CertSecrets
	read := func(name string) (map[string][]byte, bool, error) {
		s := &corev1.Secret{}
		err := i.reader.Get(ctx, client.ObjectKey{Namespace: ta.Namespace, Name: name}, s)
		if apierrors.IsNotFound(err) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading Secret %s: %w", name, err)
		}
		ref := metav1.GetControllerOfNoCopy(s)
		return s.Data, ref != nil && ref.UID == ta.UID, nil
	}
	caData, caOurs, err := read(mta.CASecretName(ta.Name))
	if err != nil {
		return out, time.Time{}, err
	}
	serverData, serverOurs, err := read(mta.ServerSecretName(ta.Name))
	if err != nil {
		return out, time.Time{}, err
	}
	clientData, clientOurs, err := read(mta.ClientSecretName(ta.Name))
	if err != nil {
		return out, time.Time{}, err
	}
	if !caOurs {
		// Someone else's CA (cert-manager's): the leaf Secrets are theirs to issue too.
		return out, time.Time{}, nil
	}

	ca, bundle, err := i.ca(ta, caData, now)
	if err != nil {
		return out, time.Time{}, err
	}
	bundlePEM := certs.EncodeCertificates(bundle)
	next := certs.RenewalTime(ca.Cert)
	for _, c := range bundle[1:] {
		next = minTime(next, c.NotAfter) // drop it from the bundle once expired
	}
	out.CA = map[string][]byte{mta.SecretCAKey: bundlePEM, mta.SecretCertKey: ca.CertPEM, mta.SecretKeyKey: ca.KeyPEM}

	leaf := func(data map[string][]byte, cn string, dnsNames []string, usage x509.ExtKeyUsage) (map[string][]byte, error) {
		cur, err := certs.ParseIssued(data[mta.SecretCertKey], data[mta.SecretKeyKey])
		if err != nil || !issuedByOneOf(cur.Cert, bundle) || certs.DueForRenewal(cur.Cert, now) ||
			!slices.Equal(cur.Cert.DNSNames, dnsNames) {
			if cur, err = ca.Issue(cn, dnsNames, []x509.ExtKeyUsage{usage}, i.validity, now); err != nil {
				return nil, err
			}
		}
		next = minTime(next, certs.RenewalTime(cur.Cert))
		return map[string][]byte{mta.SecretCAKey: bundlePEM, mta.SecretCertKey: cur.CertPEM, mta.SecretKeyKey: cur.KeyPEM}, nil
	}
	if serverOurs {
		if out.Server, err = leaf(serverData, mta.Name(ta.Name), mta.ServerDNSNames(*ta), x509.ExtKeyUsageServerAuth); err != nil {
			return out, time.Time{}, err
		}
	}
	if clientOurs {
		cn := fmt.Sprintf("%s-collector", ta.Name)
		if out.Client, err = leaf(clientData, cn, nil, x509.ExtKeyUsageClientAuth); err != nil {
			return out, time.Time{}, err
		}
	}
	return out, next, nil
}

// ca returns the CA of data, or a new one when there is none usable or it is due for renewal, and
// the bundle to trust: the CA first, then earlier CAs of the stored bundle that have not expired.
func (i issuer) ca(ta *v1alpha1.TargetAllocator, data map[string][]byte, now time.Time) (*certs.CA, []*x509.Certificate, error) {
	ca, err := certs.ParseCA(data[mta.SecretCertKey], data[mta.SecretKeyKey])
	if err != nil || certs.DueForRenewal(ca.Cert, now) {
		if ca, err = certs.NewCA(fmt.Sprintf("%s.%s target allocator CA", ta.Namespace, ta.Name), i.caValidity, now); err != nil {
			return nil, nil, err
		}
	}
	bundle := []*x509.Certificate{ca.Cert}
	old, _ := certs.ParseCertificates(data[mta.SecretCAKey])
	for _, c := range old {
		if c.IsCA && now.Before(c.NotAfter) && !bytes.Equal(c.Raw, ca.Cert.Raw) {
			bundle = append(bundle, c)
		}
	}
	return ca, bundle, nil
}

// issuedByOneOf reports whether one of the CAs in bundle issued c. A certificate of a replaced CA
// is kept until its own renewal: peers that loaded the bundle before the CA changed (the
// collector reads its CA file once) keep verifying it meanwhile.
func issuedByOneOf(c *x509.Certificate, bundle []*x509.Certificate) bool {
	for _, ca := range bundle {
		if c.CheckSignatureFrom(ca) == nil {
			return true
		}
	}
	return false
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
