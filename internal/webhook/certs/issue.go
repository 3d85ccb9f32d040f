package certs

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"time"
)

// CA is a certificate authority the operator created: its certificate and key, with their PEM.
// It is the same kind of CA the webhook certificate comes from, offered to other components that
// need certificates without cert-manager (the target allocator's mutual TLS).
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// Issued is a certificate a CA issued, with its PEM and its key's PEM.
type Issued struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA creates a self-signed CA called commonName, valid for validity from now (backdated a
// little for clock skew, as the webhook's).
func NewCA(commonName string, validity time.Duration, now time.Time) (*CA, error) {
	c, key, keyPEM, err := newNamedCA(commonName, validity, now)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: c, Key: key, CertPEM: encodeBundle([]*x509.Certificate{c}), KeyPEM: keyPEM}, nil
}

// ParseCA parses a CA certificate and its key (PKCS #8 PEM, as NewCA writes it); the key must
// match the certificate, and the certificate must be a CA.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	certs, err := parseCerts(certPEM)
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("no CA certificate")
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	if !certs[0].IsCA || !publicKeysEqual(key.Public(), certs[0].PublicKey) {
		return nil, fmt.Errorf("not a CA certificate with its key")
	}
	return &CA{Cert: certs[0], Key: key, CertPEM: encodeBundle(certs[:1]), KeyPEM: keyPEM}, nil
}

// Issue issues a certificate called commonName for dnsNames with the extended key usages, valid
// for validity from now but never beyond the CA.
func (ca *CA) Issue(commonName string, dnsNames []string, usages []x509.ExtKeyUsage, validity time.Duration, now time.Time) (Issued, error) {
	c, certPEM, keyPEM, err := newLeaf(ca.Cert, ca.Key, commonName, dnsNames, nil, usages, validity, now)
	if err != nil {
		return Issued{}, err
	}
	return Issued{Cert: c, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// ParseIssued parses a certificate and its key; the key must match the certificate.
func ParseIssued(certPEM, keyPEM []byte) (Issued, error) {
	m := &material{certPEM: certPEM, keyPEM: keyPEM}
	key, err := m.parseServing()
	if err != nil {
		return Issued{}, err
	}
	if !publicKeysEqual(key.Public(), m.cert.PublicKey) {
		return Issued{}, fmt.Errorf("%s does not match %s", keyKey, keyCert)
	}
	return Issued{Cert: m.cert, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// ParseCertificates returns the certificates of a PEM bundle.
func ParseCertificates(pemBytes []byte) ([]*x509.Certificate, error) { return parseCerts(pemBytes) }

// EncodeCertificates returns certs as one PEM bundle.
func EncodeCertificates(certs []*x509.Certificate) []byte { return encodeBundle(certs) }

// DueForRenewal reports whether less than a third of c's validity is left at now: the webhook
// certificate's renewal rule.
func DueForRenewal(c *x509.Certificate, now time.Time) bool { return dueForRenewal(c, now) }

// RenewalTime is when c becomes due for renewal (a third of its validity left).
func RenewalTime(c *x509.Certificate) time.Time {
	return c.NotAfter.Add(-c.NotAfter.Sub(c.NotBefore) / 3)
}
