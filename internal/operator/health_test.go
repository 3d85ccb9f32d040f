package operator

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/otelop/otelop/internal/testenv"
)

// TestReadinessWaitsForWebhookServer: until the webhook server accepts TLS connections the
// readiness checks fail (a new replica gets no webhook traffic); liveness never depends on it.
func TestReadinessWaitsForWebhookServer(t *testing.T) {
	dir := t.TempDir()
	writeSelfSigned(t, dir)
	port := testenv.FreePort(t)

	o := DefaultOptions()
	o.WebhookHost, o.WebhookPort = "127.0.0.1", port
	// The manager is never started: no API server is contacted.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: dir}),
	})
	if err != nil {
		t.Fatal(err)
	}
	live, ready := healthChecks(mgr, o)
	check := func(checks map[string]healthz.Checker) error {
		for name, c := range checks {
			if err := c(nil); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	if err := check(live); err != nil {
		t.Fatalf("liveness must not wait for the webhook server: %v", err)
	}
	if err := check(ready); err == nil {
		t.Fatal("ready before the webhook server was started")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.GetWebhookServer().Start(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check(ready)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after the webhook server started: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	o.EnableWebhooks = false
	if _, ready := healthChecks(mgr, o); len(ready) != 1 {
		t.Errorf("without webhooks readiness is a ping, got %d checks", len(ready))
	}
}

// writeSelfSigned writes tls.crt and tls.key for 127.0.0.1 into dir.
func writeSelfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
