package installtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/test/proc"
)

// LeaderElectionLease is the Lease the operator holds in its namespace (upstream's election ID).
const LeaderElectionLease = "9f7554c3.opentelemetry.io"

// Names are the object names of one install; scenarios look objects up by them.
type Names struct {
	// Namespace holds the operator's Deployment, Services, Lease and certificate Secret.
	Namespace string
	// Deployment is the operator's Deployment; its pod's ServiceAccount and container args are
	// what the operator process runs with.
	Deployment string
	// WebhookService is the Service the webhook configurations and the conversion webhook name;
	// MetricsService the Service of the metrics endpoint.
	WebhookService, MetricsService string
	// MetricsReader is the ClusterRole that grants scraping /metrics.
	MetricsReader string
	// CertSecret is the Secret where the operator keeps its webhook CA and certificate.
	CertSecret string
}

// Operator is the operator process standing in for an install's pod.
type Operator struct {
	Names
	// PodIP is the pod's IP, where the process listens; MetricsPort and HealthPort its ports
	// (the container's "metrics" port and the readiness probe's port).
	PodIP                   string
	MetricsPort, HealthPort int
	// ServiceAccount is the pod's ServiceAccount, whose token the process uses.
	ServiceAccount string
	// Pod is the name of the pod the process stands in for.
	Pod string
	// Log is the file of the process's output.
	Log string

	env      *Env
	proc     *proc.Process
	readyURL string
}

// RunOperator waits for the pod of the Deployment names.Deployment to run on a fake node, starts
// the operator binary as that pod and returns once the pod's readiness probe passes and the
// endpoints of the webhook and metrics Services are published. The process authenticates with a
// token of the pod's ServiceAccount bound to the pod (what the kubelet mounts) and runs with the
// container's args followed by PodLocalArgs. Stop ends it (also call it when err is not nil).
func (e *Env) RunOperator(ctx context.Context, names Names) (*Operator, error) {
	return e.RunReplica(ctx, names, nil)
}

// RunReplica is RunOperator for a Deployment with several replicas: it runs the operator as a
// running pod of names.Deployment that none of others stands in for already.
func (e *Env) RunReplica(ctx context.Context, names Names, others []*Operator) (*Operator, error) {
	op := &Operator{Names: names, env: e}
	taken := map[string]bool{}
	for _, o := range others {
		taken[o.Pod] = true
	}
	pod, err := e.operatorPod(ctx, names, taken)
	if err != nil {
		return op, err
	}
	op.Pod, op.PodIP, op.ServiceAccount = pod.Name, pod.Status.PodIP, pod.Spec.ServiceAccountName
	container := pod.Spec.Containers[0]
	probe := container.ReadinessProbe
	if probe == nil || probe.HTTPGet == nil {
		return op, fmt.Errorf("container %s of Deployment %s has no HTTP readiness probe", container.Name, names.Deployment)
	}
	op.HealthPort = probe.HTTPGet.Port.IntValue()
	for _, p := range container.Ports {
		if p.Name == "metrics" {
			op.MetricsPort = int(p.ContainerPort)
		}
	}
	if op.MetricsPort == 0 {
		return op, fmt.Errorf("container %s of Deployment %s has no port named metrics", container.Name, names.Deployment)
	}

	tr, err := e.Clientset.CoreV1().ServiceAccounts(names.Namespace).CreateToken(ctx, op.ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(3600)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		}}, metav1.CreateOptions{})
	if err != nil {
		return op, fmt.Errorf("token for the operator's ServiceAccount %s: %w", op.ServiceAccount, err)
	}
	// One folder and log per pod: several replicas, or Deployments, may share the namespace.
	dir := filepath.Join(e.Cluster.Dir, "operator-"+pod.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return op, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := e.writeTokenKubeconfig(kubeconfig, tr.Status.Token); err != nil {
		return op, err
	}
	bin, err := e.operatorBinary(ctx)
	if err != nil {
		return op, err
	}

	args := append(append([]string{}, container.Args...), op.PodLocalArgs(filepath.Join(dir, "webhook-certs"))...)
	op.Log = filepath.Join(e.Cluster.Dir, "logs", "operator-"+pod.Name+".log")
	// KUBECONFIG stands for the ServiceAccount mount: the process is the pod's identity, not admin.
	op.proc, err = proc.Start("operator", bin, args, op.Log, "KUBECONFIG="+kubeconfig)
	if err != nil {
		return op, err
	}
	// The kubelet's readiness probe: the Deployment's probe path and port, on the pod's IP.
	op.readyURL = fmt.Sprintf("http://%s:%d%s", op.PodIP, op.HealthPort, probe.HTTPGet.Path)
	if err := op.proc.WaitHTTP(ctx, op.readyURL, 200*time.Millisecond, 90*time.Second); err != nil {
		return op, err
	}
	// Ready: the endpoints controller would now add the pod to the Services.
	return op, op.publishEndpoints(ctx)
}

// publishEndpoints writes the endpoints of the webhook and metrics Services from their Ready pods.
func (op *Operator) publishEndpoints(ctx context.Context) error {
	for _, svc := range []string{op.WebhookService, op.MetricsService} {
		if _, err := op.env.Cluster.PublishEndpoints(ctx, op.Namespace, svc); err != nil {
			return fmt.Errorf("endpoints of %s/%s: %w", op.Namespace, svc, err)
		}
	}
	return nil
}

// Kill kills the process (SIGKILL, as when its container dies) and returns once the pod's
// readiness probe fails. Until MarkNotReady, the Services' endpoints still list the pod, as they do
// in a cluster until the kubelet's probe has failed failureThreshold times.
func (op *Operator) Kill(ctx context.Context) error {
	op.proc.Kill()
	<-op.proc.Done()
	if proc.HTTPOK(ctx, op.readyURL) {
		return fmt.Errorf("pod %s still answers its readiness probe after its process was killed", op.Pod)
	}
	return nil
}

// MarkNotReady plays the kubelet and the endpoints controller after a failed readiness probe: the
// pod is marked not Ready and the Services' endpoints are written without it.
func (op *Operator) MarkNotReady(ctx context.Context) error {
	pods := op.env.Clientset.CoreV1().Pods(op.Namespace)
	pod, err := pods.Get(ctx, op.Pod, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			pod.Status.Conditions[i].Status = corev1.ConditionFalse
			pod.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking pod %s not ready: %w", op.Pod, err)
	}
	return op.publishEndpoints(ctx)
}

// Stop ends the operator process (SIGTERM, then SIGKILL after 20s). It may be called again.
func (op *Operator) Stop() {
	if op.proc != nil {
		op.proc.Stop(20 * time.Second)
	}
}

// PodLocalArgs are appended to the install's container args, overriding what a process outside a
// pod cannot do as shipped:
//   - bind addresses: the shipped ":9443", ":8443" and ":8081" mean every interface; a local
//     process must listen on the pod's IP only (the network rule: loopback, never 0.0.0.0); the
//     ports stay the container's;
//   - the certificate dir: the shipped path is the pod's emptyDir mount;
//   - the namespace: a pod reads it from its ServiceAccount mount.
func (op *Operator) PodLocalArgs(certDir string) []string {
	return []string{
		"--webhook-host=" + op.PodIP,
		fmt.Sprintf("--metrics-addr=%s:%d", op.PodIP, op.MetricsPort),
		fmt.Sprintf("--health-probe-addr=%s:%d", op.PodIP, op.HealthPort),
		"--webhook-cert-dir=" + certDir,
		"--webhook-cert-namespace=" + op.Namespace,
	}
}

// operatorPod waits for a pod of the Deployment, not one of taken, to run on a fake node with an IP.
func (e *Env) operatorPod(ctx context.Context, names Names, taken map[string]bool) (*corev1.Pod, error) {
	dep := &appsv1.Deployment{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: names.Namespace, Name: names.Deployment}, dep); err != nil {
		return nil, fmt.Errorf("the operator's Deployment: %w", err)
	}
	selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return nil, err
	}
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := e.Clientset.CoreV1().Pods(names.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return false, nil
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil && !taken[p.Name] {
				pod = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no running pod of Deployment %s/%s: %w", names.Namespace, names.Deployment, err)
	}
	if !strings.HasPrefix(pod.Status.PodIP, "127.") {
		return nil, fmt.Errorf("pod IP %s is not a loopback address", pod.Status.PodIP)
	}
	return pod, nil
}

// writeTokenKubeconfig writes a kubeconfig for the simulated cluster that authenticates with token.
func (e *Env) writeTokenKubeconfig(path, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sim"] = &clientcmdapi.Cluster{Server: e.Cluster.Config.Host,
		CertificateAuthority: e.Cluster.Config.CAFile, CertificateAuthorityData: e.Cluster.Config.CAData}
	cfg.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sim"] = &clientcmdapi.Context{Cluster: "sim", AuthInfo: "operator"}
	cfg.CurrentContext = "sim"
	return clientcmd.WriteToFile(*cfg, path)
}
