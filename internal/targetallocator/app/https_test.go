package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/testenv"
)

type pki struct {
	caPEM      []byte
	ca         *x509.Certificate
	caKey      *ecdsa.PrivateKey
	dir        string
	clientCert tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &pki{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca: ca, caKey: key, dir: t.TempDir()}
	p.clientCert = p.issue(t, "collector", x509.ExtKeyUsageClientAuth, "")
	return p
}

func (p *pki) issue(t *testing.T, cn string, usage x509.ExtKeyUsage, prefix string) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if prefix != "" {
		_ = os.WriteFile(filepath.Join(p.dir, prefix+".crt"), certPEM, 0o600)
		_ = os.WriteFile(filepath.Join(p.dir, prefix+".key"), keyPEM, 0o600)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHTTPSWithClientCertificates: with https enabled and a CA, the TLS listener requires a
// client certificate signed by it and serves secrets in /scrape_configs; plain HTTP redacts them.
func TestHTTPSWithClientCertificates(t *testing.T) {
	p := newPKI(t)
	p.issue(t, "127.0.0.1", x509.ExtKeyUsageServerAuth, "server")
	_ = os.WriteFile(filepath.Join(p.dir, "ca.crt"), p.caPEM, 0o600)
	cfg := securedConfig(t)
	cfg.ListenAddr = testenv.FreeAddr(t)
	cfg.HTTPS = config.HTTPS{Enabled: true, ListenAddr: testenv.FreeAddr(t), CAFilePath: filepath.Join(p.dir, "ca.crt"),
		TLSCertFilePath: filepath.Join(p.dir, "server.crt"), TLSKeyFilePath: filepath.Join(p.dir, "server.key")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Log("target allocator stopped:", err)
		}
	}()

	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	fetch := func(c *http.Client, url string) (string, error) {
		var lastErr error
		for i := 0; i < 50; i++ {
			resp, err := c.Get(url)
			if err == nil {
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return string(b), nil
			}
			lastErr = err
			if strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "tls") {
				return "", err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return "", lastErr
	}
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{p.clientCert}}}}
	body, err := fetch(withCert, "https://"+cfg.HTTPS.ListenAddr+"/scrape_configs")
	if err != nil || !strings.Contains(body, "hunter2") {
		t.Fatalf("mTLS: %v %s", err, body)
	}
	body, err = fetch(http.DefaultClient, "http://"+cfg.ListenAddr+"/scrape_configs")
	if err != nil || strings.Contains(body, "hunter2") || !strings.Contains(body, "secured") {
		t.Fatalf("plain HTTP must redact: %v %s", err, body)
	}
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if _, err := fetch(noCert, "https://"+cfg.HTTPS.ListenAddr+"/scrape_configs"); err == nil {
		t.Fatal("HTTPS without a client certificate was served")
	}
}

// TestHTTPSWithoutCARefusesToStart is the attack of issue 33, finding 1: with HTTPS on and no
// ca_file_path, a TLS client without a certificate read every scrape secret in clear. The allocator
// now refuses to start and names the missing field; the positive control is
// TestHTTPSWithClientCertificates, where the same files plus a CA serve secrets over mutual TLS.
func TestHTTPSWithoutCARefusesToStart(t *testing.T) {
	p := newPKI(t)
	p.issue(t, "127.0.0.1", x509.ExtKeyUsageServerAuth, "server")
	cfg := securedConfig(t)
	cfg.ListenAddr = testenv.FreeAddr(t)
	cfg.HTTPS = config.HTTPS{Enabled: true, ListenAddr: testenv.FreeAddr(t),
		TLSCertFilePath: filepath.Join(p.dir, "server.crt"), TLSKeyFilePath: filepath.Join(p.dir, "server.key")}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()

	// Whatever Run does, a client without a certificate must not read the password.
	noCert := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for i := 0; i < 10; i++ {
		if resp, err := noCert.Get("https://" + cfg.HTTPS.ListenAddr + "/scrape_configs"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "hunter2") {
				t.Fatalf("a TLS client without a certificate read the scrape secrets: %s", b)
			}
		}
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "ca_file_path") {
				t.Fatalf("Run without a CA = %v, want an error naming ca_file_path", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("the allocator started its HTTPS listener without a CA")
}

// securedConfig is a configuration with one job whose basic auth password is hunter2.
func securedConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`
config:
  scrape_configs:
  - job_name: secured
    basic_auth: {username: u, password: hunter2}
    static_configs: [{targets: ["127.0.0.2:9"]}]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
