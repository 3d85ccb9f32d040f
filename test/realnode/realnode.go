// Package realnode runs a Kubernetes cluster with one real node — etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler (test/simcluster), plus a kubelet, containerd, runc and a
// bridge CNI network — so that end-to-end tests see pods really run: images start, probes answer,
// containers log. Everything lives inside network, PID and mount namespaces that Main creates for
// the test binary; see README, "The real-node cluster".
package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/otelop/otelop/test/proc"
	"github.com/otelop/otelop/test/simcluster"
)

// NodeName is the name of the real node.
const NodeName = "realnode"

// Options configure a real-node cluster. The zero value is usable.
type Options struct {
	// Dir holds everything the cluster writes; default a new folder under $OTELOP_REALNODE_DIR
	// (set by Main) or the temporary folder.
	Dir string
	// ReadyTimeout bounds each step (default 90s).
	ReadyTimeout time.Duration
	// Progress, when set, receives one line per step.
	Progress func(format string, args ...any)
}

// Cluster is a running real-node cluster.
type Cluster struct {
	*simcluster.Cluster
	// Clientset talks to the API server as cluster admin.
	Clientset kubernetes.Interface
	// Dir is the working folder; node logs are in Dir/node-logs.
	Dir string

	opts           Options
	binDir         string
	containerdSock string
	procs          []*proc.Process
	keep           bool
}

// Start brings up the control plane and the node, loads the pause, collector, OTLP app and agent
// images, and returns once the node is Ready. It must run inside Main's namespaces. On failure it
// stops whatever it started.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if !Inside() {
		return nil, errors.New("realnode: Start must run inside the namespaces of realnode.Main")
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 90 * time.Second
	}
	if opts.Progress == nil {
		opts.Progress = func(string, ...any) {}
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp(os.Getenv(dirEnv), "cluster-"); err != nil {
			return nil, err
		}
	}
	c = &Cluster{Dir: opts.Dir, opts: opts, binDir: filepath.Join(repoRoot(), "bin", "realnode")}
	defer func() {
		if err != nil {
			_ = c.Stop()
			err = fmt.Errorf("realnode: %w (logs in %s)", err, c.Dir)
		}
	}()
	start := time.Now()
	images := []Image{
		{Name: PauseImage, Binary: filepath.Join(c.binDir, "pause")},
		{Name: CollectorImage, Binary: filepath.Join(c.binDir, "otelcol")},
		{Name: OTLPAppImage, Binary: filepath.Join(c.binDir, "otlpapp")},
		{Name: AgentImage, Binary: filepath.Join(c.binDir, "cp"), Files: map[string]string{"/javaagent.jar": AgentJarContent}},
	}
	built := make(chan error, 1)
	go func() {
		if err := buildBinaries(repoRoot(), c.binDir); err != nil {
			built <- err
			return
		}
		built <- c.writeImages(images)
	}()

	cpDir := filepath.Join(c.Dir, "control-plane")
	pki := filepath.Join(cpDir, "pki")
	c.Cluster, err = simcluster.Start(ctx, simcluster.Options{
		Dir: cpDir, KeepDir: true, NoFakeNodes: true, ReadyTimeout: opts.ReadyTimeout, Progress: opts.Progress,
		// Pods reach the API server at the node's address (through a forwarder a test runs there)
		// when they cannot name it "kubernetes" in a hosts file of their own.
		APIServerIPs: []net.IP{net.ParseIP(NodeIP)},
		APIServerArgs: []string{
			// logs, exec and port-forward go to the kubelet at the node's InternalIP, inside the namespace.
			"--kubelet-preferred-address-types=InternalIP",
			"--kubelet-client-certificate=" + filepath.Join(pki, "admin.crt"),
			"--kubelet-client-key=" + filepath.Join(pki, "admin.key"),
		},
	})
	if err != nil {
		return c, err
	}
	if c.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		return c, err
	}
	if err := <-built; err != nil {
		return c, fmt.Errorf("building the node's programs and images: %w", err)
	}
	opts.Progress("control plane up and images built in %s", time.Since(start).Round(100*time.Millisecond))
	if err := c.startContainerd(ctx); err != nil {
		return c, err
	}
	for _, img := range images {
		if err := c.importImage(img); err != nil {
			return c, err
		}
	}
	opts.Progress("containerd up, images loaded")
	if err := c.startKubelet(ctx); err != nil {
		return c, err
	}
	opts.Progress("real node Ready in %s", time.Since(start).Round(100*time.Millisecond))
	return c, nil
}

// Binary returns the path of a test program built for the node (a folder of test/realnode/cmd),
// e.g. to load it as an image with LoadImage.
func (c *Cluster) Binary(name string) string { return filepath.Join(c.binDir, name) }

// RESTConfig returns a copy of the admin connection.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.Config) }

// Stop deletes every pod (so that the kubelet stops the containers and runc removes their
// cgroups), then stops the kubelet, containerd and the control plane, and removes Dir unless Keep
// was called. Processes that survive are killed with the namespace when the test binary exits.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	if c.Clientset != nil && c.kubeletRunning() {
		c.deleteAllPods()
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(10 * time.Second)
	}
	c.procs = nil
	if c.Cluster != nil {
		_ = c.Cluster.Stop() // its folder is inside Dir (KeepDir), removed below
	}
	if c.containerdSock != "" {
		unmountUnder(c.Dir)
	}
	if c.keep {
		return nil
	}
	return os.RemoveAll(c.Dir)
}

// Keep makes Stop leave Dir (control-plane and node logs) in place and returns it.
func (c *Cluster) Keep() string {
	c.keep = true
	return c.Dir
}

func (c *Cluster) kubeletRunning() bool {
	for _, p := range c.procs {
		if p.Name == "kubelet" && !p.Exited() {
			return true
		}
	}
	return false
}

func (c *Cluster) deleteAllPods() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nss, err := c.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	grace := int64(2) // not 0: a forced deletion would not wait for the kubelet
	for _, ns := range nss.Items {
		_ = c.Clientset.CoreV1().Pods(ns.Name).DeleteCollection(ctx,
			metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{})
	}
	// Wait until the kubelet has confirmed every deletion (it removes the pod objects last).
	_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	})
}

// nodeReady reports whether the real node is Ready.
func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
