package realnode

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/test/proc"
)

// containerdConfig is containerd's configuration: every path under the cluster's folder, the CRI
// plugin with our pause image as sandbox image, cgroupfs (no systemd), the runc wrapper, and pod
// network namespaces mounted under the state folder instead of /run/netns.
const containerdConfig = `version = 2
root = "{{DIR}}/root"
state = "{{DIR}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{{DIR}}/containerd.sock"
[ttrpc]
  address = "{{DIR}}/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{{DIR}}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{PAUSE}}"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{{RUNC}}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{CNIBIN}}"
    conf_dir = "{{DIR}}/cni"
`

// cniConfig is the pod network: a bridge inside the test's network namespace, host-local
// addresses from PodCIDR, and no masquerading (nothing leaves the namespace: it has no route out).
const cniConfig = `{
  "cniVersion": "1.0.0",
  "name": "realnode",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "{{DIR}}/ipam", "ranges": [[{"subnet": "{{CIDR}}"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
`

// kubeletConfig is what makes a kubelet run in a test sandbox on cgroup v1 without systemd: no QoS
// cgroups or node-allocatable enforcement, no swap or local-storage checks, no eviction, and its
// own ports on the node's address.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
localStorageCapacityIsolation: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
address: {{NODEIP}}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {{HEALTHZ}}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: {{CA}}}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://{{SOCK}}
resolvConf: ""
serializeImagePulls: false
nodeStatusUpdateFrequency: 2s
syncFrequency: 10s
fileCheckFrequency: 10s
registerNode: true
`

func fill(tmpl string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(tmpl)
}

func cniBinDir() string {
	for _, d := range []string{"/usr/lib/cni", "/opt/cni/bin"} {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			return d
		}
	}
	return "/usr/lib/cni"
}

func (c *Cluster) startContainerd(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "containerd")
	if err := os.MkdirAll(filepath.Join(dir, "cni"), 0o700); err != nil {
		return err
	}
	c.containerdSock = filepath.Join(dir, "containerd.sock")
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(fill(containerdConfig, "{{DIR}}", dir, "{{PAUSE}}", PauseImage,
		"{{RUNC}}", filepath.Join(c.binDir, "runc-oomfix"), "{{CNIBIN}}", cniBinDir())), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cni", "10-realnode.conflist"),
		[]byte(fill(cniConfig, "{{DIR}}", dir, "{{CIDR}}", PodCIDR)), 0o600); err != nil {
		return err
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return err
	}
	p, err := c.start("containerd", bin, "--config", cfg, "--log-level", "info")
	if err != nil {
		return err
	}
	return c.waitFor(ctx, p, "containerd's socket", func(context.Context) bool {
		conn, err := net.Dial("unix", c.containerdSock)
		if err != nil {
			return false
		}
		_ = conn.Close()
		return exec.Command("ctr", "--address", c.containerdSock, "version").Run() == nil
	})
}

func (c *Cluster) startKubelet(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "kubelet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	kubeconfig, _, _, err := c.IssueClient("kubelet", "system:node:"+NodeName, []string{"system:nodes", "system:masters"})
	if err != nil {
		return err
	}
	healthz, err := proc.FreePort()
	if err != nil {
		return err
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(fill(kubeletConfig, "{{NODEIP}}", NodeIP, "{{HEALTHZ}}", fmt.Sprint(healthz),
		"{{CA}}", c.CAFile(), "{{SOCK}}", c.containerdSock)), 0o600); err != nil {
		return err
	}
	bin := filepath.Join(c.Cluster.BinDir(), "kubelet")
	p, err := c.start("kubelet", bin, "--config="+cfg, "--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(dir, "root"), "--cert-dir="+filepath.Join(dir, "pki"),
		"--hostname-override="+NodeName, "--node-ip="+NodeIP, "--v=1")
	if err != nil {
		return err
	}
	return c.waitFor(ctx, p, "the node Ready", func(ctx context.Context) bool {
		n, err := c.Clientset.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		return err == nil && nodeReady(n)
	})
}

func (c *Cluster) waitFor(ctx context.Context, p *proc.Process, what string, cond func(context.Context) bool) error {
	return proc.WaitFor(ctx, p, what, 200*time.Millisecond, c.opts.ReadyTimeout, cond)
}
