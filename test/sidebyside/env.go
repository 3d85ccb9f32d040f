package sidebyside

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/certs"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
	"github.com/otelop/otelop/test/upstreamop"
)

// The two sides: the operator that serves a namespace.
const (
	Upstream = "upstream"
	Otelop   = "otelop"
)

// Sides in the order every report lists them.
var Sides = []string{Upstream, Otelop}

// UpstreamPkg is upstream's module, for its webhook manifests.
const UpstreamPkg = "github.com/open-telemetry/opentelemetry-operator"

// Options say what Start brings up.
type Options struct {
	// Name is the test's name: the field owner of the CRDs and the webhook CA's name.
	Name string
	// WebhookPrefix prefixes the names of both sides' webhook configurations.
	WebhookPrefix string
	// SideLabel is the namespace label that routes a namespace to one side's webhooks.
	SideLabel string
	// Namespaces returns the namespaces of a side (Start adds SideLabel and creates them); each
	// operator watches its side's.
	Namespaces func(side string) []*corev1.Namespace
	// Cluster are the simulated cluster's options.
	Cluster simcluster.Options
	// CRDDirs are folders of CRDs installed after this project's (config/crd/bases), before the
	// operators start (so that both detect them).
	CRDDirs []string
	// Resources and FailResources select the webhooks of both sides (see Routing); MinWebhooks is
	// how many each side must register.
	Resources, FailResources []string
	MinWebhooks              int
	// ConvertCRDs are CRDs whose conversion webhook is ours (one per CRD for the whole cluster).
	ConvertCRDs []string
	// UpstreamArgs and UpstreamEnv are added to upstream's flags and environment.
	UpstreamArgs, UpstreamEnv []string
	// Ours adjusts our operator's options (webhook server, certificates and WatchNamespaces are
	// set).
	Ours func(*operator.Options)
	// Prepare runs before the operators start, with the cluster's admin client.
	Prepare func(ctx context.Context, admin client.Client) error
}

// Env is the running cluster with both operators.
type Env struct {
	T       *testing.T
	Ctx     context.Context
	Root    string
	Cluster *simcluster.Cluster
	Admin   client.Client
	Up      *upstreamop.Operator
	// Namespaces are the names of each side's namespaces.
	Namespaces map[string][]string
}

// Start brings up the simulated cluster, this project's CRDs, the namespaces of both sides, both
// operators' webhooks and both operators; everything stops when the test ends.
func Start(t *testing.T, ctx context.Context, o Options) *Env {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("upstream's operator runs in a network namespace of its own and needs unshare (util-linux)")
	}
	root := testenv.RepoRoot()
	upBin := filepath.Join(root, "bin", "tools", "upstream-operator")
	if _, err := os.Stat(upBin); err != nil {
		t.Fatalf("%v: build upstream's operator with hack/build-tools.sh upstream-operator (make test does)", err)
	}
	upModule, err := UpstreamModuleDir(root)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := simcluster.Start(ctx, o.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(cluster.LogTails(10))
			t.Log("the simulated cluster's files are kept in", cluster.Keep())
		}
		_ = cluster.Stop()
	})
	e := &Env{T: t, Ctx: ctx, Root: root, Cluster: cluster, Namespaces: map[string][]string{}}
	if e.Admin, err = client.New(cluster.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range append([]string{filepath.Join(root, "config", "crd", "bases")}, o.CRDDirs...) {
		if _, err := simcluster.InstallCRDs(ctx, cluster.Config, dir, o.Name); err != nil {
			t.Fatal(err)
		}
	}
	for _, side := range Sides {
		for _, n := range o.Namespaces(side) {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[o.SideLabel] = side
			if err := e.Admin.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			e.Namespaces[side] = append(e.Namespaces[side], n.Name)
		}
	}

	ca := testenv.NewCA(t, o.Name+"-webhooks")
	upDir := filepath.Join(cluster.Dir, "upstream")
	ourCertDir := filepath.Join(cluster.Dir, "otelop-webhook-certs")
	for _, d := range []string{filepath.Join(upDir, "k8s-webhook-server", "serving-certs"), ourCertDir} {
		WriteServingCert(t, ca, d)
	}
	ports := map[string]int{}
	for _, side := range Sides {
		if ports[side], err = proc.FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	manifests := map[string]string{
		Upstream: filepath.Join(upModule, "config", "webhook", "manifests.yaml"),
		Otelop:   filepath.Join(root, "config", "webhook", "manifests.yaml"),
	}
	for _, side := range Sides {
		n, err := InstallWebhooks(ctx, e.Admin, Routing{Prefix: o.WebhookPrefix, Side: side, Label: o.SideLabel,
			ManifestsPath: manifests[side], Port: ports[side], CA: ca.PEM(), Resources: o.Resources, FailResources: o.FailResources})
		if err != nil {
			t.Fatal(err)
		}
		if n < o.MinWebhooks {
			t.Fatalf("%s: %d webhooks for %v, want at least %d", side, n, o.Resources, o.MinWebhooks)
		}
	}
	// a field owner of its own: the CRDs were applied as o.Name, whose other fields must stay
	if err := simcluster.RouteConversion(ctx, e.Admin, o.Name+"-conversion", ports[Otelop], ca.PEM(), o.ConvertCRDs...); err != nil {
		t.Fatal(err)
	}
	if o.Prepare != nil {
		if err := o.Prepare(ctx, e.Admin); err != nil {
			t.Fatal(err)
		}
	}

	upKube, _, _, err := cluster.IssueClient("upstream-operator", "upstream-operator", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(upDir, 0o700); err != nil {
		t.Fatal(err)
	}
	e.Up, err = upstreamop.Start(upstreamop.Options{
		Bin: upBin, Kubeconfig: upKube, APIHost: cluster.Config.Host, Dir: upDir, WebhookPort: ports[Upstream],
		LogPath: filepath.Join(cluster.Dir, "logs", "upstream-operator.log"),
		Args:    append([]string{"--metrics-addr=127.0.0.1:8080", "--health-probe-addr=127.0.0.1:8081"}, o.UpstreamArgs...),
		Env:     append([]string{"WATCH_NAMESPACE=" + strings.Join(e.Namespaces[Upstream], ",")}, o.UpstreamEnv...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("upstream's operator:\n" + e.Up.Tail(30))
		}
		if err := e.Up.Stop(); err != nil {
			t.Logf("stopping upstream's operator: %v", err)
		}
	})
	e.startOurs(ports[Otelop], ourCertDir, o.Ours)
	return e
}

// startOurs runs our operator in this process as its own user, watching only its side's
// namespaces, serving its webhooks on 127.0.0.1:port with the certificate files in certDir.
func (e *Env) startOurs(port int, certDir string, adjust func(*operator.Options)) {
	t := e.T
	kube, _, _, err := e.Cluster.IssueClient("otelop-operator", "otelop-operator", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kube)
	if err != nil {
		t.Fatal(err)
	}
	o := operator.DefaultOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.WebhookHost, o.WebhookPort = "127.0.0.1", port
	o.Certs.Mode, o.Certs.CertDir = certs.ModeFiles, certDir
	o.WatchNamespaces = append([]string(nil), e.Namespaces[Otelop]...)
	if adjust != nil {
		adjust(&o)
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	mgr, err := operator.New(ctx, cfg, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Logf("our operator: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Log("our operator did not stop within 20s")
		}
	})
}

// WriteServingCert writes tls.crt and tls.key for 127.0.0.1, signed by ca, into dir.
func WriteServingCert(t testing.TB, ca *testenv.CA, dir string) {
	t.Helper()
	cert := ca.ServingCert(t)
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	key := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(dir, certs.CertFile), crt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, certs.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// UpstreamModuleDir is the folder of upstream's module in the module cache (the tools module of
// hack/tools/upstream-operator requires it), for its webhook manifests.
func UpstreamModuleDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", UpstreamPkg)
	cmd.Dir = filepath.Join(root, "hack", "tools", "upstream-operator")
	out, err := cmd.Output()
	dir := strings.TrimSuffix(string(out), "\n")
	if err != nil || dir == "" {
		return "", fmt.Errorf("locating upstream's module (for its webhook manifests): %v", err)
	}
	return dir, nil
}
