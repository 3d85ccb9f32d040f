package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// clientCA is a CA that issues client certificates, as the one an API server's admission
// configuration names.
type clientCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newClientCA(t *testing.T, cn string) *clientCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &clientCA{cert: cert, key: key}
}

func (c *clientCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})
}

func (c *clientCA) client(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestClientCA: with --webhook-client-ca-file, a loopback server with the option serves the pod
// webhook's path only to a caller with a certificate of that CA (the API server); a caller with
// none gets 403 without reaching the handler, one with another CA's certificate fails the
// handshake. Another path (conversion) still answers a caller without a certificate.
func TestClientCA(t *testing.T) {
	g := NewWithT(t)
	apiserverCA, otherCA := newClientCA(t, "apiserver-client-ca"), newClientCA(t, "someone-else")
	file := filepath.Join(t.TempDir(), "client-ca.pem")
	g.Expect(os.WriteFile(file, apiserverCA.pem(), 0o600)).To(Succeed())
	opt, err := ClientCA(file)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = ClientCA(filepath.Join(t.TempDir(), "missing.pem"))
	g.Expect(err).To(HaveOccurred())

	reached := 0
	mux := http.NewServeMux()
	mux.Handle(podmutation.Path, podmutation.RequireClientCert(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached++
		_, _ = io.WriteString(w, "admitted")
	})))
	mux.HandleFunc("/convert", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "converted") })
	srv := httptest.NewUnstartedServer(mux)
	serving := testenv.NewCA(t, "serving")
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving.ServingCert(t)}, MinVersion: tls.VersionTLS12}
	opt(srv.TLS)
	srv.StartTLS() // 127.0.0.1
	defer srv.Close()

	get := func(path string, certs ...tls.Certificate) (int, string, error) {
		cfg := &tls.Config{RootCAs: serving.Pool(), MinVersion: tls.VersionTLS12}
		if len(certs) > 0 {
			// Offer the certificate whatever CAs the server names (as a forger would).
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
		}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Post(srv.URL+path, "application/json", nil)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	code, _, err := get(podmutation.Path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusForbidden), "no client certificate")
	_, _, err = get(podmutation.Path, otherCA.client(t, "pod"))
	g.Expect(err).To(HaveOccurred(), "a certificate of another CA fails the handshake")
	g.Expect(reached).To(BeZero())

	code, body, err := get(podmutation.Path, apiserverCA.client(t, "kube-apiserver"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "control: the API server's certificate is accepted")
	g.Expect(body).To(Equal("admitted"))
	code, body, err = get("/convert")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "conversion needs no certificate")
	g.Expect(body).To(Equal("converted"))
}
