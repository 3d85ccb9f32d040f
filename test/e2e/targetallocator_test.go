package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/imagebuild"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/simcluster"
)

const taCollector = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: scraper
spec:
  mode: statefulset
  replicas: 3
  targetAllocator:
    enabled: true
    allocationStrategy: consistent-hashing
    prometheusCR:
      enabled: true
      scrapeConfigSelector: {matchLabels: {team: apps}}
  config:
    receivers:
      prometheus:
        config:
          scrape_configs:
          - job_name: apps
            scrape_interval: 30s
            static_configs:
            - targets: [%s]
    exporters:
      debug: {}
    service:
      pipelines:
        metrics: {receivers: [prometheus], exporters: [debug]}
`

// TestTargetAllocatorServesTheOperatorsStatefulSet: a statefulset collector with
// targetAllocator.enabled on the simulated cluster; our allocator's binary (compiled as the image
// compiles it) runs as a separate local process on loopback, standing for the generated
// Deployment's pod, with that Deployment's args and env and the configuration file the operator
// wrote into the <name>-targetallocator ConfigMap, and finds the StatefulSet's pods: each pod's
// answer is disjoint from the others' and together they are every target, for the collector's
// static job and for a ScrapeConfig its prometheusCR selector picks.
func TestTargetAllocatorServesTheOperatorsStatefulSet(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	var targets []string
	for i := 0; i < 30; i++ {
		targets = append(targets, fmt.Sprintf("127.0.1.%d:9100", i+1))
	}
	quoted := make([]string, len(targets))
	for i, a := range targets {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	create(g, ns, fmt.Sprintf(taCollector, strings.Join(quoted, ", ")))

	cm := &corev1.ConfigMap{}
	g.Eventually(func() error {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "scraper-targetallocator"}, cm)
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Eventually(func() int32 {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "scraper-collector"}, sts); err != nil {
			return -1
		}
		return sts.Status.ReadyReplicas
	}).WithTimeout(timeout).WithPolling(time.Second).Should(BeEquivalentTo(3))

	// Our allocator's binary, built as its image builds it (internal/imagebuild.Compile: static,
	// stripped, trimmed), runs as a local process standing for the generated Deployment's pod:
	// the Deployment's own args and env, the ConfigMap's file, the cluster's kubeconfig, and a
	// loopback listen address.
	dep := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "scraper-targetallocator"}, dep)).To(Succeed())
	g.Expect(dep.Spec.Template.Spec.Containers).NotTo(BeEmpty())
	ctr := dep.Spec.Template.Spec.Containers[0]
	dir := t.TempDir()
	path := filepath.Join(dir, "targetallocator.yaml")
	g.Expect(os.WriteFile(path, []byte(cm.Data["targetallocator.yaml"]), 0o600)).To(Succeed())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	listen := l.Addr().String()
	l.Close()
	args := append(append([]string{}, ctr.Args...), "--config-file="+path, "--listen-addr="+listen,
		"--kubeconfig-path="+cluster.Kubeconfig)
	stop := startAllocator(t, allocatorBinary(t), args, containerEnv(ctr.Env, dep.Namespace), filepath.Join(dir, "allocator.log"))
	defer stop()

	pods := []string{"scraper-collector-0", "scraper-collector-1", "scraper-collector-2"}
	sort.Strings(targets)
	g.Eventually(func() (string, error) { return allocated(listen, "apps", pods) }).
		WithTimeout(timeout).WithPolling(time.Second).Should(Equal(strings.Join(targets, ",")))

	// prometheus_cr: a ScrapeConfig (Prometheus Operator CRDs generated from the API types
	// module the allocator uses) selected by the collector's scrapeConfigSelector; another one
	// without the label is not.
	_, err = simcluster.InstallCRDs(context.Background(), cluster.Config, filepath.Join(testenv.RepoRoot(),
		"internal", "targetallocator", "promcr", "testdata", "crds"), "e2e")
	g.Expect(err).NotTo(HaveOccurred())
	var crTargets []string
	for i := 0; i < 12; i++ {
		crTargets = append(crTargets, fmt.Sprintf("127.0.2.%d:9100", i+1))
	}
	for name, lbls := range map[string]map[string]any{"selected": {"team": "apps"}, "ignored": {"team": "other"}} {
		sc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "monitoring.coreos.com/v1alpha1", "kind": "ScrapeConfig",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": lbls},
			"spec":     map[string]any{"staticConfigs": []any{map[string]any{"targets": toAny(crTargets)}}},
		}}
		g.Expect(k8s.Create(context.Background(), sc)).To(Succeed())
	}
	sort.Strings(crTargets)
	g.Eventually(func() (string, error) { return allocated(listen, "scrapeConfig/"+ns+"/selected", pods) }).
		WithTimeout(timeout).WithPolling(time.Second).Should(Equal(strings.Join(crTargets, ",")))
	var jobs map[string]any
	resp, err := http.Get("http://" + listen + "/jobs")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.NewDecoder(resp.Body).Decode(&jobs)).To(Succeed())
	resp.Body.Close()
	g.Expect(jobs).To(HaveKey("apps"))
	g.Expect(jobs).NotTo(HaveKey("scrapeConfig/" + ns + "/ignored"))
}

// allocated asks the allocator for each pod's targets of job, fails on a target given to two
// pods, and returns the sorted union.
func allocated(listen, job string, pods []string) (string, error) {
	seen := map[string]string{}
	for _, pod := range pods {
		var groups []struct {
			Targets []string `json:"targets"`
		}
		resp, err := http.Get("http://" + listen + "/jobs/" + url.QueryEscape(job) + "/targets?collector_id=" + pod)
		if err != nil {
			return "", err
		}
		err = json.NewDecoder(resp.Body).Decode(&groups)
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		for _, gr := range groups {
			for _, a := range gr.Targets {
				if prev, ok := seen[a]; ok {
					return "", fmt.Errorf("%s given to %s and %s", a, prev, pod)
				}
				seen[a] = pod
			}
		}
	}
	got := make([]string, 0, len(seen))
	for a := range seen {
		got = append(got, a)
	}
	sort.Strings(got)
	return strings.Join(got, ","), nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// allocatorBinary compiles cmd/target-allocator for this machine with the image's build
// (internal/imagebuild.Compile and LDFlags: CGO off, -trimpath, -s -w).
func allocatorBinary(t *testing.T) string {
	t.Helper()
	allocatorBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "e2e-target-allocator-")
		if err != nil {
			allocatorBuild.err = err
			return
		}
		out := filepath.Join(dir, "target-allocator")
		p := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
		allocatorBuild.err = imagebuild.Compile(context.Background(), testenv.RepoRoot(), "target-allocator", p,
			imagebuild.LDFlags("e2e", "e2e", ""), out)
		allocatorBuild.path = out
	})
	if allocatorBuild.err != nil {
		t.Fatal(allocatorBuild.err)
	}
	return allocatorBuild.path
}

// allocatorBuild is the allocator binary, compiled once for the tests that run it (a compile
// costs 30-90 s on a 2-core machine).
var allocatorBuild struct {
	once sync.Once
	path string
	err  error
}

// containerEnv resolves what a local process can of a container's env: plain values and the
// pod's namespace (the downward API field the Deployment uses for OTELCOL_NAMESPACE).
func containerEnv(env []corev1.EnvVar, namespace string) []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, e := range env {
		switch {
		case e.ValueFrom == nil:
			out = append(out, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			out = append(out, e.Name+"="+namespace)
		}
	}
	return out
}

// startAllocator runs the binary, its output in logPath; the returned func stops it (SIGTERM,
// then SIGKILL) and logs its output tail when the test failed. The child dies with the test
// process (Pdeathsig).
func startAllocator(t *testing.T, bin string, args, env []string, logPath string) func() {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); f.Close() }()
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("target allocator exited: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			if err := <-done; err != nil {
				t.Logf("target allocator after SIGKILL: %v", err)
			}
			t.Error("target allocator did not stop within 10s of SIGTERM")
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("target allocator log:\n%s", b)
		}
	}
}
