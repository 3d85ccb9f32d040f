package realnode_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/realnode"
	"github.com/otelop/otelop/test/simcluster"
)

// allocatorImageRepo is the name the target allocator's image gets on the node (tag "1"); the
// operator runs it as its default target allocator image.
const allocatorImageRepo = "otelop.test/target-allocator"

// allocatorImage is the build of the target allocator's image (as `make images` builds it),
// started by setup.
var allocatorImage imageBuild

// promCollectorImage runs hack/tools/otelcol-prometheus: a collector with the prometheus receiver.
const promCollectorImage = "otelop.test/otelcol-prometheus:1"

// promCollector is the build of hack/tools/otelcol-prometheus, started by setup.
var promCollector binaryBuild

// binaryBuild is a go build of a tools module running in the background.
type binaryBuild struct {
	done chan struct{}
	path string
	took time.Duration
	err  error
}

// start builds the tools module in hack/tools/<module> as a static binary (-trimpath, CGO off,
// with tags) in the background, unless the -run filter excludes forTest, the test that uses it.
// The Go build cache makes a rebuild take seconds.
func (b *binaryBuild) start(module, forTest string, tags ...string) {
	b.done = make(chan struct{})
	if excludedByRun(forTest) {
		b.err = errors.New("not built: excluded by -run")
		close(b.done)
		return
	}
	go func() {
		defer close(b.done)
		dir, err := os.MkdirTemp("", module+"-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, module)
		start := time.Now()
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-tags="+strings.Join(tags, ","), "-o", b.path, ".")
		cmd.Dir = filepath.Join(testenv.RepoRoot(), "hack", "tools", module)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build in %s: %w\n%s", cmd.Dir, err, out)
		}
		b.took = time.Since(start)
	}()
}

// wait returns the binary's path once the build is done.
func (b *binaryBuild) wait() (string, error) {
	if b.done == nil {
		return "", errors.New("not built: setup did not run")
	}
	<-b.done
	return b.path, b.err
}

// remove waits for the build and removes the binary.
func (b *binaryBuild) remove() {
	if b.done == nil {
		return
	}
	<-b.done
	if b.path != "" {
		_ = os.RemoveAll(filepath.Dir(b.path))
	}
}

// authTargetImage runs test/realnode/cmd/authtarget: /metrics only with basic auth.
const authTargetImage = "otelop.test/authtarget:1"

// authTargetMetric is the counter authtarget serves (see its package).
const authTargetMetric = "authtarget_authorized_scrapes_total"

// TestAuthenticatedScrapeThroughTheAllocator (issue 33): a ServiceMonitor whose endpoint takes its
// basic-auth credentials from a Secret selects a target that serves /metrics only with them. A
// statefulset collector with the target allocator and prometheusCR enabled, written as a user
// writes it, gets the rest from the operator: the allocator (this project's image), its RBAC,
// and the CA, serving and client certificates of their mutual TLS. The collector's prometheus
// receiver fetches the scrape config with the credentials from the allocator over mTLS and
// scrapes the target: the target's counter reaches the collector's debug exporter, and the
// target counted authorized scrapes and no unauthorized one. Controls: the target refuses a
// request without credentials (so the scrapes it counted carried them), and the allocator gives
// the password to the operator's client certificate only: not over plain HTTP, not over TLS
// without a client certificate.
//
// The node has no cluster DNS and no kube-proxy: the allocator reaches the API server at the
// node's address (a forwarder, and the address on the API server's certificate), and the
// collector resolves the allocator's Service name to the node's address (hostAliases), where a
// forwarder of this test leads port 443 to the Service's endpoint, as kube-proxy would.
func TestAuthenticatedScrapeThroughTheAllocator(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	cs := cluster.Clientset
	start := time.Now()
	step := func(what string) { t.Logf("%s after %s", what, time.Since(start).Round(100*time.Millisecond)) }

	res, err := allocatorImage.wait()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cluster.LoadOCILayout(res.Dir, allocatorImageRepo)).To(Succeed())
	collectorBin, err := promCollector.wait()
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("collector with the prometheus receiver built in %s (during setup, with the Go build cache)", promCollector.took.Round(time.Second))
	g.Expect(cluster.LoadImage(realnode.Image{Name: promCollectorImage, Binary: collectorBin})).To(Succeed())
	g.Expect(cluster.LoadImage(realnode.Image{Name: authTargetImage, Binary: cluster.Binary("authtarget")})).To(Succeed())
	_, err = simcluster.InstallCRDs(ctx, cluster.RESTConfig(),
		filepath.Join(testenv.RepoRoot(), "internal", "targetallocator", "promcr", "testdata", "crds"), "realnode")
	g.Expect(err).NotTo(HaveOccurred())
	apiPort := forwardAPIServer(t)
	step("images loaded, Prometheus Operator CRDs installed")

	const (
		name     = "scraper"
		user     = "scraper"
		password = "realnode-basic-auth-7f3a"
	)
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "scrape-credentials"},
		StringData: map[string]string{"username": user, "password": password},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	credential := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "scrape-credentials"}, Key: key}}
	}
	labels := map[string]string{"app": "authtarget"}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "target", Image: authTargetImage, ImagePullPolicy: corev1.PullNever,
			Env: []corev1.EnvVar{{Name: "TARGET_USERNAME", ValueFrom: credential("username")},
				{Name: "TARGET_PASSWORD", ValueFrom: credential("password")}},
			Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}},
		}}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Labels: labels},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "metrics", Port: 9100, TargetPort: intstr.FromString("metrics")}}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(create(ns, `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: target
spec:
  selector:
    matchLabels: {app: authtarget}
  endpoints:
  - port: metrics
    interval: 5s
    basicAuth:
      username: {name: scrape-credentials, key: username}
      password: {name: scrape-credentials, key: password}
`)).To(Succeed())

	// The collector as a user writes it; the allocator's environment and the collector's
	// hostAliases only make up for the node's missing DNS and kube-proxy (see above).
	g.Expect(create(ns, fmt.Sprintf(`
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: %[1]s
spec:
  mode: statefulset
  image: %[5]s
  hostAliases:
  - ip: %[2]s
    hostnames: [%[3]s]
  targetAllocator:
    enabled: true
    collectorTargetReloadInterval: 5s
    prometheusCR:
      enabled: true
      scrapeInterval: 5s
      serviceMonitorSelector: {}
    env:
    - {name: KUBERNETES_SERVICE_HOST, value: "%[2]s"}
    - {name: KUBERNETES_SERVICE_PORT, value: "%[4]s"}
  config:
    receivers:
      prometheus:
        config:
          scrape_configs: []
    exporters:
      debug:
        verbosity: detailed
    service:
      pipelines:
        metrics: {receivers: [prometheus], exporters: [debug]}
`, name, realnode.NodeIP, mta.Name(name), apiPort, promCollectorImage))).To(Succeed())
	forwardService(t, ns, mta.Name(name), mta.HTTPSServicePortName, mta.HTTPSServicePort)
	step("secret, target, ServiceMonitor and collector created")

	targetIP := podIP(g, ns, "target")
	const collectorPod = name + "-collector-0"
	g.Eventually(func(g Gomega) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, collectorPod, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(podReady(*p)).To(BeTrue(), "collector pod not ready")
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed(), func() string { return podLogTails(ns, 20) })
	step("collector pod " + collectorPod + " ready")

	g.Eventually(func(g Gomega) {
		logs, err := podLogs(ctx, ns, collectorPod, "otc-container")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(logs).To(ContainSubstring("-> Name: " + authTargetMetric))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed(), func() string { return podLogTails(ns, 20) })
	step("the target's metric reached the collector's debug exporter")

	counts := targetCounts(g, targetIP)
	g.Expect(counts.Authorized).To(BeNumerically(">=", 1))
	g.Expect(counts.Unauthorized).To(BeZero(), "a scrape came without the credentials")
	t.Logf("target counted %d authorized and %d unauthorized scrapes", counts.Authorized, counts.Unauthorized)

	// Control: the target refuses a request without the credentials.
	resp, err := http.Get("http://" + net.JoinHostPort(targetIP, "9100") + "/metrics")
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	g.Expect(targetCounts(g, targetIP).Unauthorized).To(BeEquivalentTo(1))

	// Attack controls: the allocator's scrape configs carry the job but not the password over
	// plain HTTP and refuse TLS without a client certificate; the operator's client certificate
	// (positive control) gets the password.
	taIP := endpointIP(g, ns, mta.Name(name))
	plain := getBody(g, &http.Client{Timeout: 10 * time.Second}, "http://"+net.JoinHostPort(taIP, strconv.Itoa(8080))+"/scrape_configs")
	g.Expect(plain).To(ContainSubstring("serviceMonitor/" + ns + "/target"))
	g.Expect(plain).NotTo(ContainSubstring(password))
	httpsURL := "https://" + net.JoinHostPort(taIP, strconv.Itoa(mta.HTTPSPort)) + "/scrape_configs"
	noCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if resp, err := noCert.Get(httpsURL); err == nil {
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		g.Expect(string(body)).NotTo(ContainSubstring(password), "a TLS client without a certificate got the password")
		t.Logf("TLS without a client certificate: %s, no password", resp.Status)
	} else {
		t.Logf("TLS without a client certificate refused: %v", err)
	}
	clientCert, err := cs.CoreV1().Secrets(ns).Get(ctx, mta.ClientSecretName(name), metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	pair, err := tls.X509KeyPair(clientCert.Data[mta.SecretCertKey], clientCert.Data[mta.SecretKeyKey])
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(clientCert.Data[mta.SecretCAKey])).To(BeTrue())
	withCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, RootCAs: roots, ServerName: mta.Name(name)}}}
	g.Expect(getBody(g, withCert, httpsURL)).To(ContainSubstring(password))
	step("controls passed")
}

// podIP waits for the pod to run and returns its IP.
func podIP(g Gomega, ns, name string) string {
	var ip string
	g.Eventually(func(g Gomega) {
		p, err := cluster.Clientset.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		ip = p.Status.PodIP
		g.Expect(ip).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	return ip
}

// targetCounts reads authtarget's /counts.
func targetCounts(g Gomega, ip string) (c struct{ Authorized, Unauthorized int64 }) {
	g.Expect(json.Unmarshal([]byte(getBody(g, &http.Client{Timeout: 10 * time.Second},
		"http://"+net.JoinHostPort(ip, "9100")+"/counts")), &c)).To(Succeed())
	return c
}

func getBody(g Gomega, c *http.Client, url string) string {
	resp, err := c.Get(url)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET %s: %s", url, body)
	return string(body)
}

// podLogTails returns the last n lines of each container's log in ns (of its previous run when
// it restarted), for failure messages.
func podLogTails(ns string, n int) string {
	ctx := context.Background()
	pods, err := cluster.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			opts := &corev1.PodLogOptions{Container: c.Name, Previous: c.RestartCount > 0}
			data, err := cluster.Clientset.CoreV1().Pods(ns).GetLogs(p.Name, opts).DoRaw(ctx)
			if err != nil {
				data = []byte(err.Error())
			}
			fmt.Fprintf(&b, "--- %s/%s (restarts %d, previous %t) ---\n%s\n", p.Name, c.Name, c.RestartCount, opts.Previous, tail(string(data), n))
		}
	}
	return b.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// endpointIP waits for a ready endpoint of the Service and returns its address.
func endpointIP(g Gomega, ns, service string) string {
	var ip string
	g.Eventually(func() error {
		var err error
		ip, _, err = serviceEndpoint(ns, service, "")
		return err
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	return ip
}

// serviceEndpoint returns the address of a ready endpoint of the Service and the port its
// EndpointSlices give for the Service port called portName ("" for none).
func serviceEndpoint(ns, service, portName string) (string, int32, error) {
	slices, err := cluster.Clientset.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return "", 0, err
	}
	for _, s := range slices.Items {
		var port int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == portName && p.Port != nil {
				port = *p.Port
			}
		}
		if portName != "" && port == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if (e.Conditions.Ready == nil || *e.Conditions.Ready) && len(e.Addresses) > 0 {
				return e.Addresses[0], port, nil
			}
		}
	}
	return "", 0, fmt.Errorf("service %s/%s has no ready endpoint with port %q", ns, service, portName)
}

// forwardService does what kube-proxy would for one Service port, at the node's address: it
// listens on NodeIP:port and leads each connection to a ready endpoint of the Service, looked up
// when the connection comes.
func forwardService(t *testing.T, ns, service, portName string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(realnode.NodeIP, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = in.Close() }()
				ip, p, err := serviceEndpoint(ns, service, portName)
				if err != nil {
					return
				}
				out, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(int(p))), 5*time.Second)
				if err != nil {
					return
				}
				defer func() { _ = out.Close() }()
				go func() { _, _ = io.Copy(out, in); _ = out.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
}
