// Package testenv starts a real kube-apiserver + etcd (controller-runtime's envtest) from the
// binaries that hack/build-tools.sh builds into bin/k8s/<version>, with the project's CRDs
// installed and, when asked, the webhook server wired in. Use one Env per test package, from
// TestMain.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// K8sVersion is the Kubernetes version the test binaries are built at.
const K8sVersion = "v1.37.2"

// RepoRoot returns the directory of the product's go.mod, found by walking up from the working
// directory (go test runs each package in its own folder).
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && len(data) > 0 && containsModule(string(data), "github.com/otelop/otelop") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testenv: cannot find the repository root (go.mod of github.com/otelop/otelop)")
		}
		dir = parent
	}
}

func containsModule(gomod, module string) bool {
	for _, line := range splitLines(gomod) {
		if line == "module "+module {
			return true
		}
	}
	return false
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// AssetsDir returns where kube-apiserver, etcd and kubectl are: $KUBEBUILDER_ASSETS if set,
// otherwise bin/k8s/<K8sVersion> under the repository root.
func AssetsDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "bin", "k8s", K8sVersion)
}

// CheckAssets fails with a clear message when the control-plane binaries have not been built.
func CheckAssets() error {
	dir := AssetsDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("testenv: %s not found in %s; run `make cluster-tools` (or `make test`) first", b, dir)
		}
	}
	return nil
}

// Options configure an Env.
type Options struct {
	// CRDDirectoryPaths to install; empty means config/crd/bases (when it exists).
	CRDDirectoryPaths []string
	// CRDs to install in addition, e.g. third-party CRDs built in the test.
	CRDs []*apiextensionsv1CRD
	// WebhookInstallOptions are passed through; envtest then creates the webhook configurations
	// pointing at a local port and a generated serving certificate (LocalServingCertDir).
	WebhookInstallOptions envtest.WebhookInstallOptions
	// Scheme for the returned Client; nil means client-go's scheme.
	Scheme *runtime.Scheme
	// APIServerFlags are extra kube-apiserver flags (name -> value).
	APIServerFlags map[string]string
}

// Env is a running API server with a client for it.
type Env struct {
	Environment *envtest.Environment
	// Config is an admin connection to the API server.
	Config *rest.Config
	// Client is a controller-runtime client (not cached) using Options.Scheme.
	Client client.Client
}

// Start runs etcd and kube-apiserver and installs the CRDs. Call Stop when done.
func Start(opts Options) (*Env, error) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	if err := CheckAssets(); err != nil {
		return nil, err
	}
	crdDirs := opts.CRDDirectoryPaths
	if len(crdDirs) == 0 {
		d := filepath.Join(RepoRoot(), "config", "crd", "bases")
		if _, err := os.Stat(d); err == nil {
			crdDirs = []string{d}
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: AssetsDir(),
		CRDDirectoryPaths:     crdDirs,
		CRDs:                  opts.CRDs,
		ErrorIfCRDPathMissing: len(opts.CRDDirectoryPaths) > 0,
		WebhookInstallOptions: opts.WebhookInstallOptions,
		Scheme:                opts.Scheme,
	}
	api := env.ControlPlane.GetAPIServer()
	// Loopback only, as everything a test starts must be.
	api.SecureServing.Address = "127.0.0.1"
	// kube-apiserver can hang in graceful shutdown while clients still watch; it is killed after this.
	api.StopTimeout = 5 * time.Second
	for k, v := range opts.APIServerFlags {
		api.Configure().Set(k, v)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("testenv: starting kube-apiserver and etcd from %s: %w", AssetsDir(), err)
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = defaultScheme()
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Client: c}, nil
}

// Stop shuts down the API server and etcd.
func (e *Env) Stop() error {
	if e == nil || e.Environment == nil {
		return nil
	}
	return e.Environment.Stop()
}

// Main is a TestMain helper: it starts an Env, hands it to set, runs the package's tests and
// stops the Env. It exits the process with the tests' code.
//
//	func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}, func(e *testenv.Env) { env = e }) }
func Main(m *testing.M, opts Options, set func(*Env)) {
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	set(e)
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
	}
	os.Exit(code)
}
