package system

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fluxModules are the tools modules that pin the Flux controllers (hack/tools/flux/<name>) and the
// module each builds.
var fluxModules = map[string]string{
	"source-controller": "github.com/fluxcd/source-controller",
	"helm-controller":   "github.com/fluxcd/helm-controller",
}

// fluxCRDDirs are the CRDs the Flux controllers ship (config/crd/bases of their modules, from the
// module cache, the same versions as the binaries).
func fluxCRDDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	for name, mod := range fluxModules {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod)
		cmd.Dir = filepath.Join(root, "hack", "tools", "flux", name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("locating %s in the module cache: %v\n%s", mod, err, out)
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases")
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s ships no CRDs at %s: %v", mod, dir, err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// startFlux runs source-controller and helm-controller against the platform API server
// (kubeconfig), everything on loopback: the artifact storage server on a free port in a temporary
// folder, metrics and health on free ports, no leader election, all namespaces watched.
func startFlux(t, owner *testing.T, root, kubeconfig, logDir string) {
	t.Helper()
	env := []string{"KUBECONFIG=" + kubeconfig, "RUNTIME_NAMESPACE=flux-system"}
	storage := loopback(t)
	common := func(health string) []string {
		return []string{
			"--metrics-addr=" + loopback(t), "--health-addr=" + health,
			"--enable-leader-election=false", "--watch-all-namespaces=true",
			"--log-encoding=console", "--log-level=debug", "--requeue-dependency=2s",
		}
	}
	bin := filepath.Join(root, "bin", "tools")
	srcHealth, helmHealth := loopback(t), loopback(t)
	start(t, owner, logDir, "flux-source-controller", filepath.Join(bin, "flux-source-controller"), env,
		append(common(srcHealth), "--storage-path="+owner.TempDir(), "--storage-addr="+storage, "--storage-adv-addr="+storage)...)
	start(t, owner, logDir, "flux-helm-controller", filepath.Join(bin, "flux-helm-controller"), env, common(helmHealth)...)
	for _, h := range []string{srcHealth, helmHealth} {
		waitHTTP(t, "http://"+h+"/healthz", time.Minute)
	}
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not answer 200 within %s", url, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
