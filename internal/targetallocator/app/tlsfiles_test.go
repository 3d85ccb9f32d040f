package app

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelop/otelop/internal/targetallocator/config"
)

// TestTLSFilesReloaded: a renewed certificate written over the mounted files is served from the
// next handshake on, without a restart; a half-written update (a key that does not match) keeps
// the last good certificate, and the first one (the control) was served before.
func TestTLSFilesReloaded(t *testing.T) {
	p := newPKI(t)
	first := p.issue(t, "first", x509.ExtKeyUsageServerAuth, "server")
	if err := os.WriteFile(filepath.Join(p.dir, "ca.crt"), p.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	r := &tlsFiles{https: config.HTTPS{CAFilePath: filepath.Join(p.dir, "ca.crt"),
		TLSCertFilePath: filepath.Join(p.dir, "server.crt"), TLSKeyFilePath: filepath.Join(p.dir, "server.key")}}
	if _, err := r.load(); err != nil {
		t.Fatal(err)
	}
	served := func() []byte {
		cfg, err := r.configForClient(nil)
		if err != nil || len(cfg.Certificates) != 1 {
			t.Fatalf("config: %v", err)
		}
		return cfg.Certificates[0].Certificate[0]
	}
	if !bytes.Equal(served(), first.Certificate[0]) {
		t.Fatal("the first certificate is not served")
	}
	second := p.issue(t, "second-with-a-longer-name", x509.ExtKeyUsageServerAuth, "server")
	if !bytes.Equal(served(), second.Certificate[0]) {
		t.Fatal("the renewed certificate is not served")
	}
	// Half-written: a new certificate without its key.
	keep, _ := os.ReadFile(filepath.Join(p.dir, "server.key"))
	p.issue(t, "third", x509.ExtKeyUsageServerAuth, "server")
	if err := os.WriteFile(filepath.Join(p.dir, "server.key"), append(keep, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served(), second.Certificate[0]) {
		t.Fatal("an unreadable update replaced the served certificate")
	}
}
