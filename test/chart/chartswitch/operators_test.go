package chartswitch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/install/installtest"
	"github.com/otelop/otelop/test/upstreamop"
)

// ourNames are this chart's object names for the release (upstream's chart names).
var ourNames = installtest.Names{
	Namespace:      namespace,
	Deployment:     fullname,
	WebhookService: fullname + "-webhook",
	MetricsService: fullname,
	MetricsReader:  fullname + "-metrics",
	CertSecret:     fullname + "-webhook-cert",
}

// rolledOut waits until the operator's Deployment has exactly one pod, of its current template,
// Running on a fake node (the previous pod gone), and returns it.
func rolledOut(t *testing.T) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	poll(t, "the operator's Deployment rolled out to one pod", func(ctx context.Context) (bool, error) {
		dep := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: fullname}, dep); err != nil {
			return false, nil
		}
		st := dep.Status
		if st.ObservedGeneration < dep.Generation || st.Replicas != 1 || st.UpdatedReplicas != 1 || st.ReadyReplicas != 1 {
			return false, nil
		}
		sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
		if err != nil {
			return false, err
		}
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, nil
		}
		if len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning || pods.Items[0].Status.PodIP == "" {
			return false, nil
		}
		pod = &pods.Items[0]
		return true, nil
	})
	return pod
}

// container returns the pod's container named name.
func container(t *testing.T, pod *corev1.Pod, name string) corev1.Container {
	t.Helper()
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("pod %s has no container %s", pod.Name, name)
	return corev1.Container{}
}

// runUpstream starts upstream's operator as the operator pod of upstream's chart, the way a
// kubelet would run it: the token of the pod's ServiceAccount bound to the pod, the container's
// args, the webhook certificate of the Secret the pod mounts, the webhook server on the pod's IP
// and the container's webhook port; then it publishes the webhook Service's endpoints. What a
// process outside a pod cannot do as shipped is overridden: leader election is off (controller-
// runtime reads its namespace from the ServiceAccount mount), and its metrics and probe ports are
// inside upstream's network namespace (test/upstreamop).
func runUpstream(t *testing.T) *upstreamop.Operator {
	t.Helper()
	ctx := context.Background()
	pod := rolledOut(t)
	// Upstream's operator exits when the API does not serve the collector CRD yet (a kubelet
	// would restart it): start it once the chart's CRDs are served.
	poll(t, "the API serving opentelemetry.io/v1beta1 collectors", func(context.Context) (bool, error) {
		l, err := env.Clientset.Discovery().ServerResourcesForGroupVersion("opentelemetry.io/v1beta1")
		return err == nil && slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == "opentelemetrycollectors" }), nil
	})
	c := container(t, pod, "manager")
	var secretName string
	for _, v := range pod.Spec.Volumes {
		if v.Name == "cert" && v.Secret != nil {
			secretName = v.Secret.SecretName
		}
	}
	if secretName == "" {
		t.Fatalf("upstream's operator pod %s mounts no webhook certificate", pod.Name)
	}
	var webhookPort int32
	for _, p := range c.Ports {
		if p.Name == "webhook-server" {
			webhookPort = p.ContainerPort
		}
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret); err != nil {
		t.Fatalf("upstream's webhook Secret: %v", err)
	}
	// A short folder: it holds upstream's Unix sockets.
	dir, err := os.MkdirTemp("", "upop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	certDir := filepath.Join(dir, "k8s-webhook-server", "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(certDir, k), secret.Data[k], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeTokenKubeconfig(t, kubeconfig, podToken(t, pod))
	logPath := filepath.Join(env.Cluster.Dir, "logs", fmt.Sprintf("upstream-operator-%s.log", pod.Name))
	args := append(append([]string{}, c.Args...), "--enable-leader-election=false")
	up, err := upstreamop.Start(upstreamop.Options{
		Bin: filepath.Join(testenv.RepoRoot(), "bin", "tools", "upstream-operator"), Kubeconfig: kubeconfig,
		APIHost: env.Cluster.Config.Host, Dir: dir, WebhookHost: pod.Status.PodIP, WebhookPort: int(webhookPort),
		LogPath: logPath, Args: args,
		// The Deployment's SERVICE_ACCOUNT_NAME (fieldRef); NAMESPACE is read by its network policy code.
		Env: []string{"SERVICE_ACCOUNT_NAME=" + pod.Spec.ServiceAccountName, "NAMESPACE=" + namespace},
	})
	if err != nil {
		t.Fatalf("starting upstream's operator: %v", err)
	}
	t.Cleanup(func() { _ = up.Stop() })
	// Ready when its webhook server answers TLS on the pod's IP with the Secret's certificate, for
	// the Service's name (as the API server checks it).
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(secret.Data["ca.crt"])
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(webhookPort)))
	poll(t, "upstream's webhook server on "+addr, func(ctx context.Context) (bool, error) {
		d := tls.Dialer{Config: &tls.Config{RootCAs: roots, ServerName: fullname + "-webhook." + namespace + ".svc", MinVersion: tls.VersionTLS12}}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
	if _, err := env.Cluster.PublishEndpoints(ctx, namespace, fullname+"-webhook"); err != nil {
		t.Fatal(err)
	}
	t.Logf("upstream's operator runs as pod %s (%s), log %s", pod.Name, pod.Status.PodIP, logPath)
	return up
}

// runOurs starts this operator as the operator pod of this chart (installtest.Env.RunOperator).
func runOurs(t *testing.T) *installtest.Operator {
	t.Helper()
	pod := rolledOut(t)
	op, err := env.RunOperator(context.Background(), ourNames)
	t.Cleanup(op.Stop)
	if err != nil {
		t.Fatalf("running this chart's operator pod: %v", err)
	}
	t.Logf("this operator runs as pod %s (%s), log %s", pod.Name, op.PodIP, op.Log)
	return op
}

// podToken is a token of the pod's ServiceAccount bound to the pod, as the kubelet mounts it.
func podToken(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	tr, err := env.Clientset.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(context.Background(), pod.Spec.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(3600)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s: %v", pod.Spec.ServiceAccountName, err)
	}
	return tr.Status.Token
}

func writeTokenKubeconfig(t *testing.T, path, token string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sim"] = &clientcmdapi.Cluster{Server: env.Cluster.Config.Host,
		CertificateAuthority: env.Cluster.Config.CAFile, CertificateAuthorityData: env.Cluster.Config.CAData}
	cfg.AuthInfos["pod"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sim"] = &clientcmdapi.Context{Cluster: "sim", AuthInfo: "pod"}
	cfg.CurrentContext = "sim"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

func poll(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for {
		ok, err := cond(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within 120s", what)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// kubeletFinalizer holds an operator pod while its process stops, as a kubelet does: the pod
// object stays (terminating) until its container has exited, so the process's ServiceAccount
// token (bound to the pod) stays valid while it shuts down and releases its leader Lease. kwok
// deletes a terminating pod at once, which would cut the process off first.
const kubeletFinalizer = "chartswitch.test/kubelet"

// holdPod puts kubeletFinalizer on the operator's current pod and returns it.
func holdPod(t *testing.T) *corev1.Pod {
	t.Helper()
	pod := rolledOut(t)
	pod.Finalizers = append(pod.Finalizers, kubeletFinalizer)
	if err := env.Client.Update(context.Background(), pod); err != nil {
		t.Fatalf("holding pod %s: %v", pod.Name, err)
	}
	return pod
}

// terminate waits until the Deployment deletes pod, stops its process (stop) and lets the pod go.
func terminate(t *testing.T, pod *corev1.Pod, stop func()) {
	t.Helper()
	poll(t, "pod "+pod.Name+" terminating", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return err == nil && pod.DeletionTimestamp != nil, nil
	})
	stop()
	pod.Finalizers = slices.DeleteFunc(pod.Finalizers, func(f string) bool { return f == kubeletFinalizer })
	if err := env.Client.Update(context.Background(), pod); err != nil {
		t.Fatalf("releasing pod %s: %v", pod.Name, err)
	}
}
