// Package install proves that config/default works as shipped. On the simulated cluster it runs
// what the README tells users to run, `kubectl apply --server-side -k config/default`, unmodified;
// kwok schedules the operator's pod on a fake node, and the operator binary then runs as a local
// process standing in for that pod: it authenticates with a token of the shipped ServiceAccount
// bound to the pod (what the kubelet mounts), gets the Deployment's container args, and listens on
// the pod's IP (a 127.128.x.y loopback address). The API server reaches the shipped Service-based
// webhook and conversion configurations through the Service's endpoints
// (simcluster.Options.ServiceRouting). The tests then check conversion, collector RBAC, metrics
// authorization and leader election against that install.
package install

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/simcluster"
)

// Names of the shipped install (config/default: namespace and namePrefix are upstream's).
const (
	installNamespace = "opentelemetry-operator-system"
	deploymentName   = "opentelemetry-operator-controller-manager"
	serviceAccount   = "opentelemetry-operator-controller-manager"
	webhookService   = "opentelemetry-operator-webhook-service"
	metricsService   = "opentelemetry-operator-controller-manager-metrics-service"
	metricsReader    = "opentelemetry-operator-metrics-reader"
)

var (
	cluster *simcluster.Cluster
	k8s     client.Client
	cs      kubernetes.Interface
	// podIP is the operator pod's IP, where the local process listens.
	podIP string
	// operatorLog is the operator process's output.
	operatorLog string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	// The API server's warnings (v1alpha1 is deprecated) are expected; keep the output readable.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var err error
	cluster, err = simcluster.Start(ctx, simcluster.Options{Nodes: 2, ServiceRouting: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cluster.Stop() }()
	defer func() {
		if code != 0 {
			fmt.Fprintln(os.Stderr, cluster.LogTails(15))
			fmt.Fprintln(os.Stderr, "the simulated cluster's logs (and operator.log) are kept in", cluster.Keep())
		}
	}()
	stop, err := install(ctx)
	if stop != nil {
		defer stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "config/default installed and the operator ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}

// install applies config/default, waits for the operator's pod, starts the operator as that pod
// and waits until it is ready. stop ends the operator process.
func install(ctx context.Context) (stop func(), err error) {
	root := testenv.RepoRoot()
	if k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.NewScheme()}); err != nil {
		return nil, err
	}
	if cs, err = kubernetes.NewForConfig(cluster.Config); err != nil {
		return nil, err
	}
	binDir := os.Getenv("KUBEBUILDER_ASSETS")
	if binDir == "" {
		binDir = filepath.Join(root, "bin", "k8s", simcluster.K8sVersion)
	}
	// What the README says, verbatim apart from the kubeconfig.
	apply := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), "--kubeconfig="+cluster.Kubeconfig,
		"apply", "--server-side", "-k", "config/default")
	apply.Dir = root
	if out, err := apply.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl apply --server-side -k config/default: %w\n%s", err, out)
	}

	pod, err := operatorPod(ctx)
	if err != nil {
		return nil, err
	}
	podIP = pod.Status.PodIP
	container := pod.Spec.Containers[0]

	// The ServiceAccount token the kubelet would mount: bound to the pod.
	tr, err := cs.CoreV1().ServiceAccounts(installNamespace).CreateToken(ctx, pod.Spec.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(3600)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for the operator's ServiceAccount %s: %w", pod.Spec.ServiceAccountName, err)
	}
	kubeconfig := filepath.Join(cluster.Dir, "operator.kubeconfig")
	if err := writeTokenKubeconfig(kubeconfig, tr.Status.Token); err != nil {
		return nil, err
	}

	bin := filepath.Join(cluster.Dir, "opentelemetry-operator")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/opentelemetry-operator")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	args := append(append([]string{}, container.Args...), podLocalArgs(podIP, filepath.Join(cluster.Dir, "webhook-certs"))...)
	operatorLog = filepath.Join(cluster.Dir, "logs", "operator.log")
	logFile, err := os.Create(operatorLog)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	// KUBECONFIG stands for the ServiceAccount mount: the process is the pod's identity, not admin.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); _ = logFile.Close() }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}

	// The kubelet's readiness probe: the shipped probe path and port, on the pod's IP.
	probe := container.ReadinessProbe.HTTPGet
	readyURL := fmt.Sprintf("http://%s:%d%s", podIP, probe.Port.IntValue(), probe.Path)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("operator exited: %v", err)
		default:
		}
		return get(ctx, readyURL) == http.StatusOK, nil
	})
	if err != nil {
		return stop, fmt.Errorf("operator not ready at %s: %w\n%s", readyURL, err, tail(operatorLog, 30))
	}
	// Ready: the endpoints controller would now add the pod to the Services.
	for _, svc := range []string{webhookService, metricsService} {
		if _, err := cluster.PublishEndpoints(ctx, installNamespace, svc); err != nil {
			return stop, fmt.Errorf("endpoints of %s: %w", svc, err)
		}
	}
	return stop, nil
}

// podLocalArgs are appended to the shipped container args, overriding what a process outside a
// pod cannot do as shipped:
//   - bind addresses: the shipped ":9443", ":8443" and ":8081" mean every interface; a local
//     process must listen on the pod's IP only (the network rule: loopback, never 0.0.0.0);
//   - the certificate dir: the shipped path is the pod's emptyDir mount;
//   - the namespace: a pod reads it from its ServiceAccount mount.
func podLocalArgs(ip, certDir string) []string {
	return []string{
		"--webhook-host=" + ip,
		"--metrics-addr=" + ip + ":8443",
		"--health-probe-addr=" + ip + ":8081",
		"--webhook-cert-dir=" + certDir,
		"--webhook-cert-namespace=" + installNamespace,
	}
}

// operatorPod waits for the Deployment's pod to run on a fake node with an IP.
func operatorPod(ctx context.Context) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(installNamespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
		if err != nil {
			return false, nil
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				pod = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no running pod of Deployment %s/%s: %w", installNamespace, deploymentName, err)
	}
	if !strings.HasPrefix(pod.Status.PodIP, "127.") {
		return nil, fmt.Errorf("pod IP %s is not a loopback address", pod.Status.PodIP)
	}
	return pod, nil
}

// writeTokenKubeconfig writes a kubeconfig for the simulated cluster that authenticates with token.
func writeTokenKubeconfig(path, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sim"] = &clientcmdapi.Cluster{Server: cluster.Config.Host,
		CertificateAuthority: cluster.Config.CAFile, CertificateAuthorityData: cluster.Config.CAData}
	cfg.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sim"] = &clientcmdapi.Context{Cluster: "sim", AuthInfo: "operator"}
	cfg.CurrentContext = "sim"
	return clientcmd.WriteToFile(*cfg, path)
}

// get returns the status code of a GET of url, 0 on a connection error.
func get(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
