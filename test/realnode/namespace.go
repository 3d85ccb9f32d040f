package realnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary re-runs itself inside new namespaces; these variables tell the inner run where
// it is and which folder the outer run will remove.
const (
	innerEnv = "OTELOP_REALNODE_INNER"
	dirEnv   = "OTELOP_REALNODE_DIR"
)

// NodeIP is the node's InternalIP: a private address that exists only inside the test's network
// namespace (on its loopback device), because the kubelet refuses a loopback node IP.
const NodeIP = "10.200.0.1"

// PodCIDR is the bridge network of the pods, inside the test's network namespace.
const PodCIDR = "10.244.0.0/24"

var skipReason string

// Inside reports whether this process runs inside the test's namespaces.
func Inside() bool { return os.Getenv(innerEnv) == "1" }

// Main runs a test binary's tests inside a fresh network, PID and mount namespace (see README,
// "The real-node cluster"): everything the tests start — etcd, the API server, the kubelet,
// containerd, the pods — lives there, talks over that namespace's own loopback and bridge, and dies
// with it. Call it from TestMain: `func TestMain(m *testing.M) { os.Exit(realnode.Main(m, setup)) }`.
//
// Outside, Main installs the Debian packages the node needs (hack/realnode/install-deps.sh),
// re-runs the test binary under unshare(1) and, once it exits, removes the cgroups and the folder
// it left. When the machine cannot run a real node (not root, no namespaces, packages not
// installable) the tests run outside and Require skips them with the reason.
//
// setup, when not nil, runs inside once before the tests (e.g. to start a shared cluster); its
// teardown runs after them, told whether they failed. A setup error fails the run.
func Main(m *testing.M, setup func() (teardown func(failed bool), err error)) int {
	if Inside() {
		if err := setupNamespace(); err != nil {
			fmt.Fprintln(os.Stderr, "realnode: setting up the namespace:", err)
			return 1
		}
		if setup == nil {
			return m.Run()
		}
		teardown, err := setup()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		code := m.Run()
		teardown(code != 0)
		return code
	}
	if skipReason = prerequisites(); skipReason != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "realnode-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realnode:", err)
		return 1
	}
	before := cgroupDirs()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "realnode:", err)
		return 1
	}
	// --pid --fork: the test binary is PID 1 of a new PID namespace, so when it ends (even on a
	// panic or a timeout) the kernel kills every process it started, containers included.
	// --mount: mounts (overlay rootfs, netns bind mounts, the tmpfs over /var/log) vanish with it.
	// --net: a network namespace with only a loopback device; nothing routes out of it.
	cmd := exec.Command("unshare", append([]string{"--net", "--pid", "--fork", "--mount", "--mount-proc",
		"--propagation", "private", "--kill-child", exe}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), innerEnv+"=1", dirEnv+"="+dir)
	err = cmd.Run()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintln(os.Stderr, "realnode: running the tests in a namespace:", err)
			return 1
		}
		code = exit.ExitCode()
	}
	removeNewCgroups(before)
	if os.Getenv("OTELOP_REALNODE_KEEP") == "" {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(os.Stderr, "realnode: removing", dir+":", err)
		}
	} else {
		fmt.Fprintln(os.Stderr, "realnode: kept", dir)
	}
	return code
}

// Require skips t when the machine cannot run a real node, saying why, and otherwise makes sure
// the test runs inside the namespaces Main sets up.
func Require(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip("real-node tests skipped: " + skipReason)
	}
	if !Inside() {
		t.Fatal("real-node tests must run through realnode.Main in TestMain")
	}
}

// prerequisites returns why this machine cannot run a real node, or "".
func prerequisites() string {
	if os.Getenv("OTELOP_REALNODE_SKIP") != "" {
		return "OTELOP_REALNODE_SKIP is set"
	}
	if os.Geteuid() != 0 {
		return "they need root (network, PID and mount namespaces, containerd, the kubelet)"
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return "unshare(1) (util-linux) is not installed"
	}
	if out, err := exec.Command("unshare", "--net", "--pid", "--fork", "--mount", "true").CombinedOutput(); err != nil {
		return fmt.Sprintf("this machine cannot create network/PID/mount namespaces: %v: %s", err, strings.TrimSpace(string(out)))
	}
	script := filepath.Join(repoRoot(), "hack", "realnode", "install-deps.sh")
	cmd := exec.Command(script)
	cmd.Stdout = os.Stderr
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("the real node's Debian packages (containerd, runc, the CNI plugins, iproute2, busybox-static) are missing and could not be installed (%v): %s",
			err, strings.TrimSpace(stderr.String()))
	}
	return ""
}

// setupNamespace runs first inside the namespaces: it brings up loopback, gives the node its IP,
// and hides the host's /var/log (the kubelet writes pod logs to /var/log/pods) under a tmpfs that
// only this mount namespace sees.
func setupNamespace() error {
	for _, args := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", NodeIP + "/32", "dev", "lo"},
		{"mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/var/log"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// cgroupDirs lists the per-container cgroup folders containerd creates (cgroup v1 and v2).
func cgroupDirs() map[string]bool {
	dirs := map[string]bool{}
	for _, pattern := range []string{"/sys/fs/cgroup/*/k8s.io/*", "/sys/fs/cgroup/k8s.io/*", "/sys/fs/cgroup/*/k8s.io", "/sys/fs/cgroup/k8s.io"} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				dirs[m] = true
			}
		}
	}
	return dirs
}

// removeNewCgroups removes the (empty, once their processes are dead) container cgroups that
// appeared since before; removing a cgroup folder fails while it still has processes.
func removeNewCgroups(before map[string]bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := 0
		for d := range cgroupDirs() {
			if before[d] {
				continue
			}
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			if left > 0 {
				fmt.Fprintf(os.Stderr, "realnode: %d container cgroups could not be removed\n", left)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func repoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-tools.sh")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}
