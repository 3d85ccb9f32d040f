package operator_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{}, func(e *testenv.Env) { env = e })
}

// TestManagerBinaryServesReadyz builds the real manager binary, runs it against a real API server,
// waits for /readyz and /healthz, and checks that SIGTERM makes it exit cleanly.
func TestManagerBinaryServesReadyz(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "opentelemetry-operator")
	// -trimpath as make build: the build cache of make build (and of a fresh clone) is reused.
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/opentelemetry-operator")
	build.Dir = testenv.RepoRoot()
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))

	user, err := env.Environment.AddUser(envtest.User{Name: "operator", Groups: []string{"system:masters"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	kc, err := user.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())

	probe := testenv.FreeAddr(t)
	_, webhookPort, _ := net.SplitHostPort(testenv.FreeAddr(t))
	cmd := exec.Command(bin, "--kubeconfig="+kubeconfig, "--health-probe-addr="+probe,
		"--metrics-addr="+testenv.FreeAddr(t), "--webhook-host=127.0.0.1", "--webhook-port="+webhookPort,
		"--webhook-cert-namespace=default", "--webhook-cert-dir="+filepath.Join(dir, "certs"),
		"--webhook-cert-extra-ips=127.0.0.1", "--metrics-secure=false")
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	g.Expect(cmd.Start()).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	for _, path := range []string{"/readyz", "/healthz"} {
		g.Eventually(func() int {
			resp, err := http.Get("http://" + probe + path)
			if err != nil {
				return 0
			}
			_ = resp.Body.Close()
			return resp.StatusCode
		}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Equal(http.StatusOK), logs.String)
	}

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred(), logs.String())
	case <-ctx.Done():
		t.Fatalf("manager did not exit within 30s of SIGTERM\n%s", logs.String())
	}
}
