package webhook

import (
	"crypto/tls"
	"io"
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

// TestClientCA: with --webhook-client-ca-file, a loopback server with the option serves the pod
// webhook's path only to a caller with a certificate of that CA (the API server); a caller with
// none gets 403 without reaching the handler, one with another CA's certificate fails the
// handshake. Another path (conversion) still answers a caller without a certificate.
func TestClientCA(t *testing.T) {
	g := NewWithT(t)
	apiserverCA, otherCA := testenv.NewCA(t, "apiserver-client-ca"), testenv.NewCA(t, "someone-else")
	file := filepath.Join(t.TempDir(), "client-ca.pem")
	g.Expect(os.WriteFile(file, apiserverCA.PEM(), 0o600)).To(Succeed())
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
	_, _, err = get(podmutation.Path, otherCA.ClientCert(t, "pod"))
	g.Expect(err).To(HaveOccurred(), "a certificate of another CA fails the handshake")
	g.Expect(reached).To(BeZero())

	code, body, err := get(podmutation.Path, apiserverCA.ClientCert(t, "kube-apiserver"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "control: the API server's certificate is accepted")
	g.Expect(body).To(Equal("admitted"))
	code, body, err = get("/convert")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "conversion needs no certificate")
	g.Expect(body).To(Equal("converted"))
}
