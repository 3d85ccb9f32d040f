// Package simcluster runs a simulated Kubernetes cluster as local processes: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok (fake nodes whose pods become Running and Ready),
// all on loopback, from the binaries that hack/build-tools.sh builds from Go modules. It is used by
// end-to-end tests, benchmarks and `make run`.
package simcluster

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelop/otelop/test/proc"
)

//go:embed stages.yaml
var stagesYAML []byte

// K8sVersion is the Kubernetes version of the binaries the cluster runs.
const K8sVersion = "v1.37.2"

// FakeNodeAnnotation marks the nodes kwok manages.
const FakeNodeAnnotation = "kwok.x-k8s.io/node"

// Options configure a simulated cluster. The zero value is usable.
type Options struct {
	// Nodes is the number of fake nodes (default 3).
	Nodes int
	// Dir holds certificates, etcd data, kubeconfigs and logs; default a new temporary folder,
	// removed by Stop unless KeepDir is set.
	Dir string
	// KeepDir keeps Dir after Stop (logs stay readable).
	KeepDir bool
	// BinDir holds the binaries; default $KUBEBUILDER_ASSETS or bin/k8s/<K8sVersion> in the repo.
	BinDir string
	// Audit writes an audit log (write requests only, level Metadata) to Dir/audit.log.
	Audit bool
	// ServiceRouting makes the API server call Service-referenced webhooks (admission and CRD
	// conversion) and aggregated APIs at an endpoint of the Service (kube-apiserver
	// --enable-aggregator-routing=true) instead of its ClusterIP, which nothing serves here (there
	// is no kube-proxy). Publish the endpoints with PublishEndpoints: kwok's pod IPs are loopback
	// addresses, which the EndpointSlice controller cannot store.
	ServiceRouting bool
	// NoFakeNodes starts no kwok and creates no fake nodes, for a cluster whose nodes are real
	// kubelets (test/realnode). Nodes is ignored.
	NoFakeNodes bool
	// APIServerArgs are extra kube-apiserver flags, appended after the defaults.
	APIServerArgs []string
	// APIServerIPs are more addresses the API server's serving certificate is valid for (besides
	// 127.0.0.1 and ::1): a real node's pods reach it at the node's address (test/realnode).
	APIServerIPs []net.IP
	// ControllerManagerArgs are extra kube-controller-manager flags, appended after the defaults
	// (a repeated --controllers adds to the default list, e.g. --controllers=-endpoints-controller).
	ControllerManagerArgs []string
	// ReadyTimeout bounds how long each component may take to become ready (default 60s).
	ReadyTimeout time.Duration
	// Progress, when set, receives one line per step (for CLIs); tests leave it nil.
	Progress func(format string, args ...any)
}

// Cluster is a running simulated cluster.
type Cluster struct {
	// Config is an admin (system:masters) connection to the API server.
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig, for kubectl and the operator.
	Kubeconfig string
	// Dir is the working folder; logs are in Dir/logs.
	Dir string
	// AuditLog is the audit log path when Options.Audit is set.
	AuditLog string

	opts  Options
	pki   *pki
	procs []*proc.Process
	// apiserverArgs are the kube-apiserver's flags, for RestartAPIServer.
	apiserverArgs []string
	// restarts counts RestartAPIServer calls (each restart gets its own log file).
	restarts int
}

// Start brings up the cluster and returns once every component is ready and the fake nodes are
// Ready. On failure it stops whatever it started and returns the failing component's log tail.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	if opts.BinDir == "" {
		opts.BinDir = defaultBinDir()
	}
	if opts.Progress == nil {
		opts.Progress = func(string, ...any) {}
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "simcluster-"); err != nil {
			return nil, err
		}
	}
	c = &Cluster{Dir: opts.Dir, opts: opts}
	defer func() {
		if err != nil {
			c.stopProcesses()
			err = fmt.Errorf("simcluster: %w (logs in %s)", err, filepath.Join(c.Dir, "logs"))
		}
	}()
	for _, d := range []string{"logs", "etcd", "pki"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return c, err
		}
	}
	start := time.Now()
	if c.pki, err = newPKI(filepath.Join(c.Dir, "pki"), c.opts.APIServerIPs); err != nil {
		return c, fmt.Errorf("creating certificates: %w", err)
	}
	for _, u := range [][2]string{{"admin", "kubernetes-admin"}, {"controller-manager", "system:kube-controller-manager"},
		{"scheduler", "system:kube-scheduler"}, {"kwok", "kwok-controller"}} {
		if err := c.pki.issue(u[0], u[1], []string{"system:masters"}, false); err != nil {
			return c, err
		}
	}
	etcdURL, err := c.startEtcd(ctx)
	if err != nil {
		return c, err
	}
	if err := c.startAPIServer(ctx, etcdURL); err != nil {
		return c, err
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return c, err
	}
	if err := c.startControllerManager(ctx, cs); err != nil {
		return c, err
	}
	if err := c.startScheduler(); err != nil {
		return c, err
	}
	if !opts.NoFakeNodes {
		if err := c.startKwok(ctx, cs); err != nil {
			return c, err
		}
	}
	if opts.NoFakeNodes {
		opts.Progress("control plane ready in %s", time.Since(start).Round(100*time.Millisecond))
	} else {
		opts.Progress("cluster ready in %s (%d fake nodes)", time.Since(start).Round(100*time.Millisecond), opts.Nodes)
	}
	return c, nil
}

func defaultBinDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-tools.sh")); err == nil {
			return filepath.Join(dir, "bin", "k8s", K8sVersion)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("bin", "k8s", K8sVersion)
		}
		dir = parent
	}
}

func (c *Cluster) bin(name string) string { return filepath.Join(c.opts.BinDir, name) }

func (c *Cluster) start(name string, args ...string) (*proc.Process, error) {
	p, err := proc.Start(name, c.bin(name), args, filepath.Join(c.Dir, "logs", name+".log"))
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// waitFor polls cond until it returns true, the process exits, or the ready timeout passes.
func (c *Cluster) waitFor(ctx context.Context, p *proc.Process, what string, cond func(context.Context) bool) error {
	return proc.WaitFor(ctx, p, what, 100*time.Millisecond, c.opts.ReadyTimeout, cond)
}

func (c *Cluster) startEtcd(ctx context.Context) (string, error) {
	clientPort, err := proc.FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := proc.FreePort()
	if err != nil {
		return "", err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := c.start("etcd",
		"--name=sim", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=sim="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return "", err
	}
	c.opts.Progress("etcd starting on %s", clientURL)
	return clientURL, c.waitFor(ctx, p, "etcd /health", func(ctx context.Context) bool {
		return proc.HTTPOK(ctx, clientURL+"/health")
	})
}

func (c *Cluster) startAPIServer(ctx context.Context, etcdURL string) error {
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + c.pki.path("apiserver.crt"), "--tls-private-key-file=" + c.pki.path("apiserver.key"),
		"--client-ca-file=" + c.pki.path("ca.crt"),
		"--service-account-key-file=" + c.pki.path("sa.pub"),
		"--service-account-signing-key-file=" + c.pki.path("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=RBAC", "--allow-privileged=true",
		// The endpoint reconciler refuses loopback addresses; nothing here uses the kubernetes Service.
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--profiling=false", "--enable-priority-and-fairness=false",
		"--cert-dir=" + filepath.Join(c.Dir, "pki"),
	}
	if c.opts.ServiceRouting {
		args = append(args, "--enable-aggregator-routing=true")
	}
	args = append(args, c.opts.APIServerArgs...)
	if c.opts.Audit {
		policy := filepath.Join(c.Dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return err
		}
		c.AuditLog = filepath.Join(c.Dir, "audit.log")
		args = append(args, "--audit-policy-file="+policy, "--audit-log-path="+c.AuditLog,
			"--audit-log-format=json", "--audit-log-mode=blocking")
	}
	c.apiserverArgs = args
	p, err := c.start("kube-apiserver", args...)
	if err != nil {
		return err
	}
	c.opts.Progress("kube-apiserver starting on %s", server)
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := c.pki.writeKubeconfig(c.Kubeconfig, server, "admin"); err != nil {
		return err
	}
	for _, u := range []string{"controller-manager", "scheduler", "kwok"} {
		if err := c.pki.writeKubeconfig(filepath.Join(c.Dir, u+".kubeconfig"), server, u); err != nil {
			return err
		}
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	c.Config.QPS, c.Config.Burst = 200, 400
	return c.waitAPIServer(ctx, p)
}

// waitAPIServer waits until the kube-apiserver process p answers /readyz.
func (c *Cluster) waitAPIServer(ctx context.Context, p *proc.Process) error {
	rc, err := rest.RESTClientFor(withCodec(rest.CopyConfig(c.Config)))
	if err != nil {
		return err
	}
	return c.waitFor(ctx, p, "kube-apiserver /readyz", func(ctx context.Context) bool {
		return rc.Get().AbsPath("/readyz").Do(ctx).Error() == nil
	})
}

func (c *Cluster) startControllerManager(ctx context.Context, cs kubernetes.Interface) error {
	kc := filepath.Join(c.Dir, "controller-manager.kubeconfig")
	args := []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--service-account-private-key-file=" + c.pki.path("sa.key"), "--root-ca-file=" + c.pki.path("ca.crt"),
		"--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1",
		"--controllers=*,-nodeipam",
		// kwok heartbeats every 20-45s; a long grace keeps fake nodes from flapping to NotReady.
		"--node-monitor-grace-period=1h",
		"--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10", "--concurrent-gc-syncs=20",
		"--kube-api-qps=100", "--kube-api-burst=200"}
	p, err := c.start("kube-controller-manager", append(args, c.opts.ControllerManagerArgs...)...)
	if err != nil {
		return err
	}
	c.opts.Progress("kube-controller-manager starting")
	// The service-account controller creating "default" shows the controllers are running.
	return c.waitFor(ctx, p, "the default ServiceAccount", func(ctx context.Context) bool {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

func (c *Cluster) startScheduler() error {
	kc := filepath.Join(c.Dir, "scheduler.kubeconfig")
	_, err := c.start("kube-scheduler", "--kubeconfig="+kc, "--authentication-kubeconfig="+kc,
		"--authorization-kubeconfig="+kc, "--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1",
		"--kube-api-qps=100", "--kube-api-burst=200")
	if err == nil {
		c.opts.Progress("kube-scheduler starting")
	}
	return err
}

func (c *Cluster) startKwok(ctx context.Context, cs kubernetes.Interface) error {
	stages := filepath.Join(c.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, stagesYAML, 0o600); err != nil {
		return err
	}
	p, err := c.start("kwok", "--kubeconfig="+filepath.Join(c.Dir, "kwok.kubeconfig"), "--config="+stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector="+FakeNodeAnnotation+"=fake",
		"--node-ip=127.127.0.1", "--cidr=127.128.0.1/16", "--server-address=127.0.0.1:0",
		"--node-lease-duration-seconds=0")
	if err != nil {
		return err
	}
	c.opts.Progress("kwok starting; creating %d fake nodes", c.opts.Nodes)
	for i := range c.opts.Nodes {
		if err := c.AddNode(ctx, cs, fmt.Sprintf("sim-node-%d", i), nil); err != nil {
			return p.Failure(err)
		}
	}
	return c.waitFor(ctx, p, "fake nodes Ready", func(ctx context.Context) bool {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= c.opts.Nodes
	})
}

// AddNode creates a fake node managed by kwok, with extra labels.
func (c *Cluster) AddNode(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string) error {
	l := map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"kubernetes.io/hostname": name, "type": "kwok"}
	for k, v := range labels {
		l[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l,
			Annotations: map[string]string{FakeNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
	}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// CAFile is the cluster CA certificate, which signs every client certificate of IssueClient.
func (c *Cluster) CAFile() string { return c.pki.path("ca.crt") }

// IssueClient writes a client certificate for user cn in groups, signed by the cluster CA, and a
// kubeconfig using it; it returns the kubeconfig path and the certificate and key paths.
func (c *Cluster) IssueClient(name, cn string, groups []string) (kubeconfig, cert, key string, err error) {
	if err := c.pki.issue(name, cn, groups, false); err != nil {
		return "", "", "", err
	}
	kubeconfig = filepath.Join(c.Dir, name+".kubeconfig")
	if err := c.pki.writeKubeconfig(kubeconfig, c.Config.Host, name); err != nil {
		return "", "", "", err
	}
	return kubeconfig, c.pki.path(name + ".crt"), c.pki.path(name + ".key"), nil
}

// Keep makes Stop leave Dir (certificates, data and every component's log) in place, e.g. when a
// test failed, and returns the logs folder.
func (c *Cluster) Keep() string {
	c.opts.KeepDir = true
	return filepath.Join(c.Dir, "logs")
}

// Stop ends every process the cluster started, in reverse order (SIGTERM, then SIGKILL after a few
// seconds), and removes Dir unless KeepDir was set.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	c.stopProcesses()
	if !c.opts.KeepDir {
		return os.RemoveAll(c.Dir)
	}
	return nil
}

func (c *Cluster) stopProcesses() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(5 * time.Second)
	}
	c.procs = nil
}

// PIDs returns the process IDs of the running components (for leak checks).
func (c *Cluster) PIDs() []int {
	var pids []int
	for _, p := range c.procs {
		pids = append(pids, p.Pid())
	}
	return pids
}

// LogTails returns the last n lines of each component's log, for test failure output.
func (c *Cluster) LogTails(n int) string {
	var s string
	for _, p := range c.procs {
		s += fmt.Sprintf("--- %s (%s) ---\n%s\n", p.Name, p.LogPath, p.Tail(n))
	}
	return s
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: Metadata
`

// BinDir is the folder of the control-plane binaries the cluster runs.
func (c *Cluster) BinDir() string { return c.opts.BinDir }
