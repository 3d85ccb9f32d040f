package system

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// operatorKind says which operator binary stands in for the workload Deployment's pod: ours, or
// upstream's v0.140.0 (bin/tools/upstream-operator), which the kube-stack chart installs.
type operatorKind int

const (
	ourOperator operatorKind = iota
	upstreamOperator
)

// runOperator starts an operator binary as the workload Deployment's pod would run it: the
// arguments and literal environment of the chart's manager container as installed by Flux, and
// the container's Secret and ConfigMap volumes written as the kubelet mounts them (their keys, or
// their items, as files) at their mount paths, inside a mount namespace of the process's own
// (unshare(1), with a tmpfs over /run so that nothing of the host's /run is touched or seen).
// So the process reads the kubeconfig, the token it points at and the ServiceAccount namespace
// file exactly where the post-renderer put them. Only the listen addresses are moved to free
// loopback ports (and, for ours, the self-signed certificate to a temporary folder); extra
// arguments come last.
func runOperator(t, owner *testing.T, g Gomega, ctx context.Context, wl client.Client, wlNS, bin string, kind operatorKind, logDir, name string, extra ...string) *proc {
	t.Helper()
	dep := operatorDeployment(g, ctx, wl, wlNS)
	mgr := manager(g, dep)
	mounts := materialize(g, ctx, wl, wlNS, owner.TempDir(), dep.Spec.Template.Spec.Volumes, mgr.VolumeMounts)

	var env []string
	for _, e := range mgr.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	// The listen flags are replaced (the chart's own, and for upstream's binary the chart's
	// --metrics-secure, which kube-stack 0.20.3 passes for operator 0.154.0 and v0.140.0 lacks).
	listen := []string{"--metrics-addr", "--metrics-secure", "--health-probe-addr", "--webhook-port", "--webhook-host", "--webhook-cert-dir"}
	var args []string
	for _, a := range append(append([]string{}, mgr.Command[min(len(mgr.Command), 1):]...), mgr.Args...) {
		if !hasFlag(a, listen) {
			args = append(args, a)
		}
	}
	webhook := loopback(t)
	_, port, _ := splitHostPort(webhook)
	args = append(args, "--metrics-addr="+loopback(t), "--health-probe-addr="+loopback(t), "--webhook-port="+port)
	if kind == ourOperator {
		args = append(args, "--metrics-secure=false", "--webhook-host=127.0.0.1", "--webhook-cert-dir="+owner.TempDir())
	}
	args = append(args, extra...)
	t.Logf("%s: %q, mounts %q", name, args, mounts)

	unshare, err := exec.LookPath("unshare")
	g.Expect(err).NotTo(HaveOccurred(), "unshare(1) (util-linux) runs the operator in a mount namespace of its own")
	// sh: tmpfs over /run, each prepared folder bound at its mount path, then exec the operator.
	script := `set -e; mount -t tmpfs -o mode=0755 otelop-run /run
while [ "$1" != "--" ]; do mkdir -p "$2"; mount --bind "$1" "$2"; shift 2; done
shift; exec "$@"`
	uargs := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		uargs = append([]string{"--map-root-user"}, uargs...)
	}
	uargs = append(uargs, "--", "/bin/sh", "-c", script, "sh")
	uargs = append(uargs, mounts...)
	uargs = append(uargs, "--", bin)
	uargs = append(uargs, args...)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %s not found (make build; hack/build-tools.sh upstream-operator)", name, bin)
	}
	return start(t, owner, logDir, name, unshare, env, uargs...)
}

// materialize writes each Secret or ConfigMap volume that mounts names (all keys, or the volume's
// items at their paths) into a folder under dir, as the kubelet would, and returns the pairs
// folder, mount path. Mount paths must lie under /var/run (the tmpfs of runOperator).
func materialize(g Gomega, ctx context.Context, wl client.Client, ns, dir string, vols []corev1.Volume, mounts []corev1.VolumeMount) []string {
	byName := map[string]corev1.Volume{}
	for _, v := range vols {
		byName[v.Name] = v
	}
	var out []string
	for i, m := range mounts {
		v, ok := byName[m.Name]
		g.Expect(ok).To(BeTrue(), "volume %s of mount %s", m.Name, m.MountPath)
		g.Expect(m.SubPath).To(BeEmpty(), "subPath mounts are not materialized (%s)", m.MountPath)
		g.Expect(m.MountPath).To(Or(HavePrefix("/var/run/"), HavePrefix("/run/")), "only mounts under /run are materialized")
		data := map[string][]byte{}
		var items []corev1.KeyToPath
		switch {
		case v.Secret != nil:
			s := &corev1.Secret{}
			g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: ns, Name: v.Secret.SecretName}, s)).To(Succeed(), "Secret of volume %s", v.Name)
			data, items = s.Data, v.Secret.Items
		case v.ConfigMap != nil:
			c := &corev1.ConfigMap{}
			g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: ns, Name: v.ConfigMap.Name}, c)).To(Succeed(), "ConfigMap of volume %s", v.Name)
			for k, s := range c.Data {
				data[k] = []byte(s)
			}
			items = v.ConfigMap.Items
		default:
			g.Expect(v.VolumeSource).To(BeNil(), "volume %s: only Secret and ConfigMap volumes are materialized", v.Name)
		}
		if items == nil {
			for k := range data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		folder := filepath.Join(dir, fmt.Sprintf("volume-%d", i))
		g.Expect(os.MkdirAll(folder, 0o755)).To(Succeed())
		for _, it := range items {
			b, ok := data[it.Key]
			g.Expect(ok).To(BeTrue(), "volume %s: key %s", v.Name, it.Key)
			p := filepath.Join(folder, it.Path)
			g.Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(p, b, 0o644)).To(Succeed())
		}
		out = append(out, folder, m.MountPath)
	}
	return out
}

// hasFlag reports whether arg sets one of flags (--f or --f=v).
func hasFlag(arg string, flags []string) bool {
	for _, f := range flags {
		if arg == f || strings.HasPrefix(arg, f+"=") {
			return true
		}
	}
	return false
}
