package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
)

// UsesHTTP reports whether the endpoint asks for OpAMP over plain HTTP polling (http:// or https://)
// rather than WebSocket.
func (c *Config) UsesHTTP() bool {
	u, err := url.Parse(c.Endpoint)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// ClientTLS returns the TLS settings for the OpAMP server connection, or nil when the endpoint is
// not encrypted (ws://, http://) or tls.insecure is set.
func (c *Config) ClientTLS() (*tls.Config, error) {
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return nil, err
	}
	if c.TLS.Insecure || (u.Scheme != "wss" && u.Scheme != "https") {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.TLS.InsecureSkipVerify} //nolint:gosec // opt-in
	if c.TLS.CAFile != "" {
		pem, err := os.ReadFile(c.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.ca_file %s: no PEM certificates found", c.TLS.CAFile)
		}
		t.RootCAs = pool
	}
	if c.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLS.CertFile, c.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls.cert_file/key_file: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// HTTPHeader returns the configured headers (already environment-expanded by Parse).
func (c *Config) HTTPHeader() http.Header {
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	return h
}

// ProxyHeader returns the headers for the explicit proxy, or nil.
func (c *Config) ProxyHeader() http.Header {
	if c.Proxy == nil || len(c.Proxy.Headers) == 0 {
		return nil
	}
	h := http.Header{}
	for k, v := range c.Proxy.Headers {
		h.Set(k, v)
	}
	return h
}

// ProxyURL returns the explicit proxy's URL, or "".
func (c *Config) ProxyURL() string {
	if c.Proxy == nil {
		return ""
	}
	return c.Proxy.URL
}

// ProxyServerTLS returns the TLS settings of the bridge's own OpAMP server, or nil for plain. The
// certificate is read again when its files change (a renewed Secret reaches the mounted files
// without a restart); a pair that does not load keeps the previous one.
func (c *Config) ProxyServerTLS() (*tls.Config, error) {
	if c.ProxyServer.CertFile == "" {
		return nil, nil
	}
	r := &certReloader{certFile: c.ProxyServer.CertFile, keyFile: c.ProxyServer.KeyFile}
	if err := r.load(); err != nil {
		return nil, fmt.Errorf("proxyServer.cert_file/key_file: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}, nil
}

// certReloader serves a certificate pair from files, reloading it when they change.
type certReloader struct {
	certFile, keyFile string
	mu                sync.Mutex
	cert              *tls.Certificate
	stamp             string
}

func (r *certReloader) fileStamp() string {
	var b strings.Builder
	for _, f := range []string{r.certFile, r.keyFile} {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d/%d;", st.ModTime().UnixNano(), st.Size())
		}
	}
	return b.String()
}

func (r *certReloader) load() error {
	stamp := r.fileStamp()
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.cert, r.stamp = &cert, stamp
	r.mu.Unlock()
	return nil
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	changed := r.fileStamp() != r.stamp
	r.mu.Unlock()
	if changed {
		_ = r.load() // keep serving the previous pair if the new one is incomplete
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert, nil
}

// ProxyServerToken reads the bearer token collectors must present to the proxy, or "" for none.
func (c *Config) ProxyServerToken() (string, error) {
	if c.ProxyServer.BearerTokenFile == "" {
		return "", nil
	}
	data, err := os.ReadFile(c.ProxyServer.BearerTokenFile)
	if err != nil {
		return "", fmt.Errorf("proxyServer.bearerTokenFile: %w", err)
	}
	tok := string(trimSpace(data))
	if tok == "" {
		return "", errors.New("proxyServer.bearerTokenFile: the file is empty")
	}
	return tok, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
