package proxy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/otelop/otelop/internal/opampbridge/config"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, PEM, into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bridge"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestProxyTLSAndToken: the proxyServer block the operator renders from spec.proxyServer
// (certificate, key and token files) gives a proxy that speaks only TLS and refuses agents
// without the token (issue 14, item 11).
func TestProxyTLSAndToken(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	tokenFile := filepath.Join(dir, "token")
	g.Expect(os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)).To(Succeed())
	cfg := &config.Config{ProxyServer: config.ProxyServer{CertFile: certFile, KeyFile: keyFile, BearerTokenFile: tokenFile}}
	tlsCfg, err := cfg.ProxyServerTLS()
	g.Expect(err).NotTo(HaveOccurred())
	token, err := cfg.ProxyServerToken()
	g.Expect(err).NotTo(HaveOccurred())
	s, err := Start(Options{Addr: "127.0.0.1:0", TLS: tlsCfg, BearerToken: token, Logger: logr.Discard()})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = s.Stop(t.Context()) }()

	uid := uuid.New()
	data, _ := proto.Marshal(&protobufs.AgentToServer{InstanceUid: uid[:], SequenceNum: 1})
	send := func(scheme, auth string) (int, error) {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		req, _ := http.NewRequest(http.MethodPost, scheme+"://"+s.Addr()+Path, bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/x-protobuf")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	code, err := send("http", "Bearer s3cret")
	g.Expect(err == nil && code == http.StatusOK).To(BeFalse(), "plain HTTP is not served")
	code, err = send("https", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusUnauthorized))
	code, _ = send("https", "Bearer wrong")
	g.Expect(code).To(Equal(http.StatusUnauthorized))
	g.Expect(s.Agents()).To(BeEmpty())
	code, _ = send("https", "Bearer s3cret")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(s.Agents()).To(HaveLen(1))
}

// TestProxyCertificateReload: a renewed certificate (the Secret's mounted files change) is served
// without a restart.
func TestProxyCertificateReload(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	certFile, keyFile, pool1 := selfSigned(t, dir)
	cfg := &config.Config{ProxyServer: config.ProxyServer{CertFile: certFile, KeyFile: keyFile}}
	tlsCfg, err := cfg.ProxyServerTLS()
	g.Expect(err).NotTo(HaveOccurred())
	s, err := Start(Options{Addr: "127.0.0.1:0", TLS: tlsCfg, Logger: logr.Discard()})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = s.Stop(t.Context()) }()
	dial := func(pool *x509.CertPool) error {
		c, err := tls.Dial("tcp", s.Addr(), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	g.Expect(dial(pool1)).To(Succeed())
	time.Sleep(10 * time.Millisecond) // a distinct modification time
	_, _, pool2 := selfSigned(t, dir) // rewrites tls.crt and tls.key in place
	g.Expect(dial(pool2)).To(Succeed(), "the new certificate is served")
	g.Expect(dial(pool1)).NotTo(Succeed())
}
