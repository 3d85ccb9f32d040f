package system

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// runOperator starts our operator binary as the workload Deployment's pod would run: the
// arguments and literal environment of the chart's manager container as installed by Flux, and
// the provider's control-plane access Secret as the kubelet mounts it (its keys as files; the
// kubeconfig's tokenFile and KUBECONFIG point at that folder instead of the pod's mount path).
// Only the listen addresses are moved to free loopback ports and the self-signed certificate to
// a temporary folder; extra arguments come last.
func runOperator(t, owner *testing.T, g Gomega, ctx context.Context, wl client.Client, wlNS, bin, logDir, name string, extra ...string) *proc {
	t.Helper()
	dep := operatorDeployment(g, ctx, wl, wlNS)
	mgr := manager(g, dep)
	secret := &corev1.Secret{}
	g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, secret)).To(Succeed())
	mount := owner.TempDir()
	for k, v := range secret.Data {
		g.Expect(os.WriteFile(filepath.Join(mount, k), v, 0o600)).To(Succeed())
	}
	kc, err := clientcmd.Load(secret.Data[flux.KubeconfigKey])
	g.Expect(err).NotTo(HaveOccurred())
	for _, a := range kc.AuthInfos {
		g.Expect(a.TokenFile).To(Equal(flux.CPAccessMountPath+"/"+flux.TokenKey), "the kubeconfig reads the mounted token")
		g.Expect(a.Token).To(BeEmpty())
		a.TokenFile = filepath.Join(mount, flux.TokenKey)
	}
	kubeconfig := filepath.Join(mount, flux.KubeconfigKey)
	g.Expect(clientcmd.WriteToFile(*kc, kubeconfig)).To(Succeed())

	var env []string
	for _, e := range mgr.Env {
		switch {
		case e.Name == "KUBECONFIG":
			g.Expect(e.Value).To(Equal(flux.CPAccessMountPath + "/" + flux.KubeconfigKey))
			env = append(env, "KUBECONFIG="+kubeconfig)
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		}
	}
	g.Expect(env).To(ContainElement("KUBECONFIG="+kubeconfig), "the post-renderer sets KUBECONFIG")
	args := append(append([]string{}, mgr.Command[min(len(mgr.Command), 1):]...), mgr.Args...)
	webhook := loopback(t)
	_, port, _ := splitHostPort(webhook)
	args = append(args,
		"--metrics-addr="+loopback(t), "--health-probe-addr="+loopback(t), "--metrics-secure=false",
		"--webhook-host=127.0.0.1", "--webhook-port="+port, "--webhook-cert-dir="+owner.TempDir())
	args = append(args, extra...)
	t.Logf("%s: %q", name, args)
	return start(t, owner, logDir, name, bin, env, args...)
}
