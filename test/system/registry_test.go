package system

import (
	"context"
	"crypto/tls"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"github.com/sirupsen/logrus"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/otelop/otelop/internal/testenv"
)

// startRegistry serves an in-memory distribution registry on 127.0.0.1 over HTTPS, with a serving
// certificate signed by ca (a private CA that no client trusts by default), or over plain HTTP
// when ca is nil, and returns its host:port, until owner ends.
func startRegistry(owner *testing.T, ca *testenv.CA) string {
	var logs syncBuffer
	logrus.SetOutput(&logs)
	owner.Cleanup(func() {
		logrus.SetOutput(os.Stderr)
		if owner.Failed() {
			owner.Logf("registry log (tail):\n%s", tailString(logs.String(), 4000))
		}
	})
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"inmemory":    configuration.Parameters{},
			"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
		},
	}
	cfg.Log.AccessLog.Disabled = true
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewUnstartedServer(handlers.NewApp(ctx, cfg)) // 127.0.0.1
	if ca == nil {
		srv.Start()
		owner.Cleanup(func() { srv.Close(); cancel() })
		return strings.TrimPrefix(srv.URL, "http://")
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServingCert(owner)}, MinVersion: tls.VersionTLS12}
	// Handshakes that fail while the CA is not trusted yet are expected; keep them for failures.
	srv.Config.ErrorLog = log.New(&logs, "registry: ", log.LstdFlags)
	srv.StartTLS()
	owner.Cleanup(func() { srv.Close(); cancel() })
	return strings.TrimPrefix(srv.URL, "https://")
}

// pushChart packages chartDir as `make chart` does (version and appVersion set to version) and
// pushes it with the Helm SDK, trusting ca (plain HTTP when ca is nil), to
// oci://<reg>/charts/<name>:<version>. It returns the
// chart's OCI URL without the tag, as a ProviderConfig's chartURL names it.
func pushChart(t *testing.T, reg string, ca *testenv.CA, chartDir, version string) string {
	t.Helper()
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version, ch.Metadata.AppVersion = version, version
	if err := ch.Validate(); err != nil {
		t.Fatal(err)
	}
	path, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := []registry.ClientOption{registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "creds.json"))}
	if ca == nil {
		opts = append(opts, registry.ClientOptPlainHTTP())
	} else {
		trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}}
		opts = append(opts, registry.ClientOptHTTPClient(trusting))
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	url := reg + "/charts/" + ch.Name()
	res, err := c.Push(data, url+":"+version)
	if err != nil {
		t.Fatalf("pushing %s: %v", filepath.Base(path), err)
	}
	t.Logf("pushed %s (%d bytes) as %s@%s", filepath.Base(path), len(data), res.Ref, res.Manifest.Digest)
	return "oci://" + url
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
