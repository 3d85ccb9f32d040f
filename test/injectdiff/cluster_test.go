package injectdiff

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/certs"
	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"

	"github.com/otelop/otelop/test/upstreamop"
)

// The two sides: the operator whose webhooks serve a namespace.
const (
	sideUpstream = "upstream"
	sideOtelop   = "otelop"
)

// sides in the order every report lists them.
var sides = []string{sideUpstream, sideOtelop}

// nsSuffixes are the namespaces each side gets (injdiff-<side>-<suffix>): main holds most
// Instrumentations and pods, other the one referenced as <ns>/<name>, single one Instrumentation
// for the "true" form, nsannot one Instrumentation and an inject annotation on the Namespace.
var nsSuffixes = []string{"main", "other", "single", "nsannot"}

// nsannotAnnotations are the annotations of the nsannot Namespaces.
var nsannotAnnotations = map[string]string{"instrumentation.opentelemetry.io/inject-python": "true"}

// upstreamPkg is upstream's module, for its webhook manifests.
const upstreamPkg = "github.com/open-telemetry/opentelemetry-operator"

// ns is the name of a side's namespace.
func ns(side, suffix string) string { return "injdiff-" + side + "-" + suffix }

// env is the running cluster with both operators.
type env struct {
	t     *testing.T
	ctx   context.Context
	admin client.Client
	up    *upstreamop.Operator
}

// start brings up the simulated cluster (no nodes: pods are only admitted, never run), this
// project's CRDs, the namespaces of both sides, both operators' webhooks and both operators.
func start(t *testing.T, ctx context.Context) *env {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("upstream's operator runs in a network namespace of its own and needs unshare (util-linux)")
	}
	root := testenv.RepoRoot()
	upBin := filepath.Join(root, "bin", "tools", "upstream-operator")
	if _, err := os.Stat(upBin); err != nil {
		t.Fatalf("%v: build upstream's operator with hack/build-tools.sh upstream-operator (make test does)", err)
	}
	upModule := upstreamModuleDir(t, root)
	cluster, err := simcluster.Start(ctx, simcluster.Options{NoFakeNodes: true})
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
	e := &env{t: t, ctx: ctx}
	if e.admin, err = client.New(cluster.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		t.Fatal(err)
	}
	if _, err := simcluster.InstallCRDs(ctx, cluster.Config, filepath.Join(root, "config", "crd", "bases"), "injectdiff"); err != nil {
		t.Fatal(err)
	}
	for _, side := range sides {
		for _, s := range nsSuffixes {
			n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(side, s), Labels: map[string]string{sideLabel: side}}}
			if s == "nsannot" {
				n.Annotations = nsannotAnnotations
			}
			if err := e.admin.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
	}

	ca := testenv.NewCA(t, "injectdiff-webhooks")
	upDir := filepath.Join(cluster.Dir, "upstream")
	ourCertDir := filepath.Join(cluster.Dir, "otelop-webhook-certs")
	for _, d := range []string{filepath.Join(upDir, "k8s-webhook-server", "serving-certs"), ourCertDir} {
		writeServingCert(t, ca, d)
	}
	upPort, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ourPort, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		side, manifests string
		port            int
	}{
		{sideUpstream, filepath.Join(upModule, "config", "webhook", "manifests.yaml"), upPort},
		{sideOtelop, filepath.Join(root, "config", "webhook", "manifests.yaml"), ourPort},
	} {
		n, err := installWebhooks(ctx, e.admin, w.side, w.manifests, w.port, ca.PEM())
		if err != nil {
			t.Fatal(err)
		}
		if n < 3 {
			t.Fatalf("%s: %d webhooks for pods and Instrumentations, want the pod webhook and the Instrumentation defaulting and validation", w.side, n)
		}
	}

	var watch []string
	for _, s := range nsSuffixes {
		watch = append(watch, ns(sideUpstream, s))
	}
	upKube, _, _, err := cluster.IssueClient("upstream-operator", "upstream-operator", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(upDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if e.up, err = startUpstream(upBin, upKube, cluster.Config.Host, upDir, upPort, watch, filepath.Join(cluster.Dir, "logs", "upstream-operator.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("upstream's operator:\n" + e.up.Tail(30))
		}
		if err := e.up.Stop(); err != nil {
			t.Logf("stopping upstream's operator: %v", err)
		}
	})
	e.startOurs(cluster, ourPort, ourCertDir)
	return e
}

// startOurs runs our operator in this process as its own user, with every language enabled (as
// upstream's flags above), watching only its side's namespaces, serving its webhooks with the
// certificate files in certDir.
func (e *env) startOurs(cluster *simcluster.Cluster, port int, certDir string) {
	t := e.t
	kube, _, _, err := cluster.IssueClient("otelop-operator", "otelop-operator", []string{"system:masters"})
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
	o.Instrumentation = operator.InstrumentationFlags{Java: true, NodeJS: true, Python: true, DotNet: true,
		ApacheHttpd: true, Go: true, Nginx: true, Multi: true}
	for _, s := range nsSuffixes {
		o.WatchNamespaces = append(o.WatchNamespaces, ns(sideOtelop, s))
	}
	ctx, cancel := context.WithCancel(e.ctx)
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

// writeServingCert writes tls.crt and tls.key for 127.0.0.1, signed by ca, into dir.
func writeServingCert(t *testing.T, ca *testenv.CA, dir string) {
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

// upstreamModuleDir is the folder of upstream's module in the module cache (the tools module of
// hack/tools/upstream-operator requires it), for its webhook manifests.
func upstreamModuleDir(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", upstreamPkg)
	cmd.Dir = filepath.Join(root, "hack", "tools", "upstream-operator")
	out, err := cmd.Output()
	dir := string(out)
	if len(dir) > 0 && dir[len(dir)-1] == '\n' {
		dir = dir[:len(dir)-1]
	}
	if err != nil || dir == "" {
		t.Fatalf("locating upstream's module (for its webhook manifests): %v", err)
	}
	return dir
}
