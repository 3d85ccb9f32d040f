package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// Secret keys.
const (
	keyCert   = "tls.crt"
	keyKey    = "tls.key"
	keyCA     = "ca.crt"
	keyCAKey  = "ca.key"
	caSubject = "opentelemetry-operator-webhook-ca"
)

// clockSkew backdates certificates so that API servers with a slightly late clock accept them.
const clockSkew = 5 * time.Minute

// backdate returns the NotBefore for a certificate valid for validity from now: up to clockSkew
// earlier, but never more than a tenth of the validity, so short test validities still work.
func backdate(now time.Time, validity time.Duration) time.Time {
	return now.Add(-min(clockSkew, validity/10))
}

// material is what the Secret holds, parsed.
type material struct {
	ca     *x509.Certificate
	caKey  crypto.Signer       // nil for an adopted Secret without the CA key: used as it is, never renewed
	bundle []*x509.Certificate // ca first, then older CAs that are still trusted
	cert   *x509.Certificate
	// raw PEM as stored
	certPEM, keyPEM, bundlePEM, caKeyPEM []byte
	// serveAfter is when the serving certificate may replace one a replica already serves: the
	// CA that issued it was new at renewal and the API servers need time to see the bundle.
	serveAfter time.Time
	// retire says when each older CA in the bundle (by fingerprint) is dropped: once every
	// serving certificate it issued has expired.
	retire map[string]time.Time
}

// fingerprint identifies a certificate in the retire map.
func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:8])
}

// encodeBundle returns certs as concatenated PEM.
func encodeBundle(certs []*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return buf.Bytes()
}

// data returns the Secret data for m.
func (m *material) data() map[string][]byte {
	return map[string][]byte{keyCert: m.certPEM, keyKey: m.keyPEM, keyCA: m.bundlePEM, keyCAKey: m.caKeyPEM}
}

// parseMaterial parses Secret data; any defect is an error (and leads to a new CA).
func parseMaterial(d map[string][]byte) (*material, error) {
	m := &material{certPEM: d[keyCert], keyPEM: d[keyKey], bundlePEM: d[keyCA], caKeyPEM: d[keyCAKey]}
	var err error
	if m.bundle, err = parseCerts(m.bundlePEM); err != nil || len(m.bundle) == 0 {
		return nil, fmt.Errorf("%s: no CA certificate", keyCA)
	}
	m.ca = m.bundle[0]
	if m.caKey, err = parseKey(m.caKeyPEM); err != nil {
		return nil, fmt.Errorf("%s: %w", keyCAKey, err)
	}
	key, err := m.parseServing()
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(key.Public(), m.cert.PublicKey) || !publicKeysEqual(m.caKey.Public(), m.ca.PublicKey) {
		return nil, fmt.Errorf("a key does not match its certificate")
	}
	return m, nil
}

// parsePair parses a Secret that holds a serving certificate, its key and the CA bundle that
// verifies it (tls.crt, tls.key, ca.crt), but no CA key: one made by hand or by another tool. It
// can be served and its bundle injected; it cannot be renewed.
func parsePair(d map[string][]byte, now time.Time) (*material, error) {
	m := &material{certPEM: d[keyCert], keyPEM: d[keyKey], bundlePEM: d[keyCA]}
	key, err := m.parseServing()
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(key.Public(), m.cert.PublicKey) {
		return nil, fmt.Errorf("%s does not match %s", keyKey, keyCert)
	}
	if m.bundle, err = parseCerts(m.bundlePEM); err != nil || len(m.bundle) == 0 {
		return nil, fmt.Errorf("%s: no CA certificate", keyCA)
	}
	for _, ca := range m.bundle {
		if m.cert.CheckSignatureFrom(ca) == nil {
			m.ca = ca
		}
	}
	if m.ca == nil {
		return nil, fmt.Errorf("no certificate in %s issued %s", keyCA, keyCert)
	}
	if !now.Before(m.cert.NotAfter) {
		return nil, fmt.Errorf("%s expired at %s", keyCert, m.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return m, nil
}

// parseServing parses the serving certificate into m.cert and returns its key; an error names
// the Secret key at fault.
func (m *material) parseServing() (crypto.Signer, error) {
	certs, err := parseCerts(m.certPEM)
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("%s: no certificate", keyCert)
	}
	m.cert = certs[0]
	key, err := parseKey(m.keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyKey, err)
	}
	return key, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	ea, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && ea.Equal(b)
}

func parseCerts(p []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, p = pem.Decode(p)
		if block == nil {
			return out, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

func parseKey(p []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(p)
	if block == nil {
		return nil, fmt.Errorf("no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported key type %T", k)
	}
	return s, nil
}

// dueForRenewal is true when less than a third of c's validity is left at now.
func dueForRenewal(c *x509.Certificate, now time.Time) bool {
	lifetime := c.NotAfter.Sub(c.NotBefore)
	return c.NotAfter.Sub(now) < lifetime/3
}

// servingOK is true when m's serving certificate is signed by its CA, not due for renewal and
// valid for exactly the wanted names and IPs.
func servingOK(m *material, dnsNames []string, ips []net.IP, now time.Time) bool {
	if dueForRenewal(m.cert, now) || m.cert.CheckSignatureFrom(m.ca) != nil {
		return false
	}
	if !slices.Equal(m.cert.DNSNames, dnsNames) || len(m.cert.IPAddresses) != len(ips) {
		return false
	}
	for i, ip := range ips {
		if !ip.Equal(m.cert.IPAddresses[i]) {
			return false
		}
	}
	return true
}

// renew returns the material to store: old itself when everything is fine, old with a shorter
// bundle when an older CA is due for retirement, otherwise a new serving certificate, and a new CA
// too when old has none usable or its CA is due. A replaced CA stays in the bundle until the
// serving certificates it issued have expired, and every CA of carried (the bundles the API
// servers trust now, for a Secret that was lost) until the replicas have moved to the new
// certificate, so that replicas still serving them are trusted meanwhile. A new CA sets serveAfter: replicas
// that serve a trusted certificate switch only once the API servers have seen the new bundle.
func renew(old *material, carried []*x509.Certificate, o Options, now time.Time) (*material, bool, error) {
	if old != nil && !dueForRenewal(old.ca, now) && servingOK(old, o.DNSNames(), o.ExtraIPs, now) {
		if !retirementDue(old, now) {
			return old, false, nil
		}
		m := *old
		m.bundle = []*x509.Certificate{old.ca}
		for _, c := range old.bundle[1:] {
			if trusted(c, &m, now) {
				m.bundle = append(m.bundle, c)
			}
		}
		m.retire = map[string]time.Time{}
		for fp, t := range old.retire {
			if inBundle(fp, m.bundle) {
				m.retire[fp] = t
			}
		}
		m.bundlePEM = encodeBundle(m.bundle)
		return &m, true, nil
	}
	m := &material{retire: map[string]time.Time{}}
	var previous []*x509.Certificate
	if old != nil && !dueForRenewal(old.ca, now) {
		m.ca, m.caKey, m.caKeyPEM = old.ca, old.caKey, old.caKeyPEM
		previous = old.bundle[1:]
		m.retire = old.retire
		m.serveAfter = old.serveAfter
	} else {
		var err error
		if m.ca, m.caKey, m.caKeyPEM, err = newCA(o.CAValidity, now); err != nil {
			return nil, false, err
		}
		m.serveAfter = now.Add(o.TrustDelay)
		if old != nil {
			previous = old.bundle
			for fp, t := range old.retire {
				m.retire[fp] = t
			}
			// Certificates the replaced CA issued are valid at most Validity from now.
			until := now.Add(max(o.Validity, old.cert.NotAfter.Sub(now)))
			m.retire[fingerprint(old.ca)] = minTime(old.ca.NotAfter, until)
		}
		// CAs the API servers trust now while the Secret was lost: needed only until every
		// replica has moved to the new certificate (the trust delay, then a sync or three).
		keep := max(time.Hour, o.TrustDelay+3*o.SyncInterval)
		for _, c := range carried {
			if _, known := m.retire[fingerprint(c)]; !known {
				m.retire[fingerprint(c)] = minTime(c.NotAfter, now.Add(keep))
			}
		}
		previous = append(previous, carried...)
	}
	m.bundle = []*x509.Certificate{m.ca}
	for _, c := range previous {
		if trusted(c, m, now) {
			m.bundle = append(m.bundle, c)
		}
	}
	for fp := range m.retire {
		if !inBundle(fp, m.bundle) {
			delete(m.retire, fp)
		}
	}
	m.bundlePEM = encodeBundle(m.bundle)
	var err error
	if m.cert, m.certPEM, m.keyPEM, err = newServing(m.ca, m.caKey, o.DNSNames(), o.ExtraIPs, o.Validity, now); err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// retirementDue reports whether an older CA of m's bundle has expired or passed its retirement.
func retirementDue(m *material, now time.Time) bool {
	for _, c := range m.bundle[1:] {
		if !now.Before(c.NotAfter) {
			return true
		}
		if t, ok := m.retire[fingerprint(c)]; ok && !now.Before(t) {
			return true
		}
	}
	return false
}

// trusted reports whether the older CA c stays in m's bundle: a CA certificate, not expired, not
// past its retirement, not already in the bundle.
func trusted(c *x509.Certificate, m *material, now time.Time) bool {
	if !c.IsCA || !now.Before(c.NotAfter) || inBundle(fingerprint(c), m.bundle) {
		return false
	}
	t, ok := m.retire[fingerprint(c)]
	return !ok || now.Before(t)
}

func inBundle(fp string, bundle []*x509.Certificate) bool {
	for _, b := range bundle {
		if fingerprint(b) == fp {
			return true
		}
	}
	return false
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// newKeyAndSerial is what every new certificate starts with: a key (and its PEM) and a serial.
func newKeyAndSerial() (*ecdsa.PrivateKey, []byte, *big.Int, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, nil, nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, nil, err
	}
	return key, keyPEM, sn, nil
}

func newCA(validity time.Duration, now time.Time) (*x509.Certificate, crypto.Signer, []byte, error) {
	return newNamedCA(caSubject, validity, now)
}

// newNamedCA returns a self-signed CA called commonName, its key and the key's PEM.
func newNamedCA(commonName string, validity time.Duration, now time.Time) (*x509.Certificate, crypto.Signer, []byte, error) {
	key, keyPEM, sn, err := newKeyAndSerial()
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             backdate(now, validity),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return c, key, keyPEM, err
}

func newServing(ca *x509.Certificate, caKey crypto.Signer, dnsNames []string, ips []net.IP, validity time.Duration, now time.Time) (*x509.Certificate, []byte, []byte, error) {
	cn := "webhook"
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	}
	return newLeaf(ca, caKey, cn, dnsNames, ips, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, validity, now)
}

// newLeaf issues a certificate called cn for dnsNames and ips with the extended key usages, valid
// for validity from now but never beyond the CA, and returns it with its PEM and its key's PEM.
func newLeaf(ca *x509.Certificate, caKey crypto.Signer, cn string, dnsNames []string, ips []net.IP, usages []x509.ExtKeyUsage, validity time.Duration, now time.Time) (*x509.Certificate, []byte, []byte, error) {
	key, keyPEM, sn, err := newKeyAndSerial()
	if err != nil {
		return nil, nil, nil, err
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
		NotBefore:    backdate(now, validity),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return c, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}
