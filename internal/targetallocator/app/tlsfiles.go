package app

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/otelop/otelop/internal/targetallocator/config"
)

// tlsRecheck is how often, at most, the HTTPS listener looks whether its files changed.
const tlsRecheck = 10 * time.Second

// tlsFiles is the HTTPS listener's certificate, key and client CA, read from files and read again
// when one of them changed (a Secret volume is updated in place when the operator renews the
// certificate). A change that cannot be read (a half-written update) keeps the last good files.
type tlsFiles struct {
	https config.HTTPS
	every time.Duration

	mu      sync.Mutex
	checked time.Time
	stamp   string
	cfg     *tls.Config
}

// configForClient is tls.Config.GetConfigForClient: the current files' configuration.
func (r *tlsFiles) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) >= r.every {
		r.checked = time.Now()
		if stamp := r.stampNow(); stamp != r.stamp {
			if cfg, err := r.read(); err == nil {
				r.cfg, r.stamp = cfg, stamp
			}
		}
	}
	return r.cfg, nil
}

// load reads the files for the first time.
func (r *tlsFiles) load() (*tls.Config, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp := r.stampNow()
	cfg, err := r.read()
	if err != nil {
		return nil, err
	}
	r.cfg, r.stamp, r.checked = cfg, stamp, time.Now()
	return cfg, nil
}

// stampNow identifies the files' current versions by size and modification time.
func (r *tlsFiles) stampNow() string {
	out := ""
	for _, p := range []string{r.https.TLSCertFilePath, r.https.TLSKeyFilePath, r.https.CAFilePath} {
		if fi, err := os.Stat(p); err == nil {
			out += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			out += "missing;"
		}
	}
	return out
}

// read builds the server configuration: the certificate, and client certificates required and
// verified against the CA file.
func (r *tlsFiles) read() (*tls.Config, error) {
	h := r.https
	cert, err := tls.LoadX509KeyPair(h.TLSCertFilePath, h.TLSKeyFilePath)
	if err != nil {
		return nil, fmt.Errorf("https: %w", err)
	}
	pem, err := os.ReadFile(h.CAFilePath)
	if err != nil {
		return nil, fmt.Errorf("https.ca_file_path: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("https.ca_file_path: %s holds no PEM certificate", h.CAFilePath)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}, nil
}
