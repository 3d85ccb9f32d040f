package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// The project's CRDs and the Prometheus Operator's (generated from its API types module).
	crds := []string{filepath.Join(testenv.RepoRoot(), "config", "crd", "bases"), filepath.Join("..", "promcr", "testdata", "crds")}
	testenv.Main(m, testenv.Options{CRDDirectoryPaths: crds}, func(e *testenv.Env) { env = e })
}

func kubeconfig(t *testing.T) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["env"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	c.AuthInfos["env"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData, Token: env.Config.BearerToken}
	c.Contexts["env"] = &clientcmdapi.Context{Cluster: "env", AuthInfo: "env"}
	c.CurrentContext = "env"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEndToEnd runs the whole allocator (as cmd/target-allocator does) on loopback against a
// real API server with three collector pods, for each strategy: every collector's answer is
// disjoint from the others' and together they are the complete target list; a collector that
// goes away hands its targets to the others.
func TestEndToEnd(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(env.Config)
	kc := kubeconfig(t)
	for i, strategy := range []string{"consistent-hashing", "least-weighted", "per-node"} {
		t.Run(strategy, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ns := fmt.Sprintf("e2e-%d", i)
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			sel := map[string]string{"app.kubernetes.io/component": "opentelemetry-collector", "app.kubernetes.io/instance": ns + ".c"}
			for c := 0; c < 3; c++ {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-collector-%d", c), Namespace: ns, Labels: sel},
					Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", c), Containers: []corev1.Container{{Name: "otc-container", Image: "otelcol"}}}}
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var targets []string
			var static strings.Builder
			for n := 0; n < 60; n++ {
				addr := fmt.Sprintf("127.0.0.%d:%d", 2+n%3, 9000+n)
				targets = append(targets, addr)
				fmt.Fprintf(&static, "    - targets: [%q]\n      labels: {__meta_kubernetes_pod_node_name: node-%d}\n", addr, n%3)
			}
			file := fmt.Sprintf(`allocation_strategy: %s
allocation_fallback_strategy: consistent-hashing
collector_namespace: %s
collector_selector:
  matchlabels: {app.kubernetes.io/component: opentelemetry-collector, app.kubernetes.io/instance: %s.c}
  matchexpressions: []
filter_strategy: relabel-config
config:
  scrape_configs:
  - job_name: app
    static_configs:
%s  - job_name: dropped
    static_configs:
    - targets: ["127.0.0.9:1"]
    relabel_configs:
    - action: drop
      source_labels: [__address__]
      regex: .*
`, strategy, ns, ns, static.String())
			cfg, err := config.Parse([]byte(file), nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.ListenAddr = testenv.FreeAddr(t)
			cfg.KubeConfigPath = kc
			done := make(chan error, 1)
			go func() { done <- Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
			base := "http://" + cfg.ListenAddr

			want := strings.Join(sorted(targets), ",")
			waitUntil(t, func() string {
				got := union(t, base, "c-collector-0", "c-collector-1", "c-collector-2")
				if got == want {
					return ""
				}
				return "got " + got
			})
			var jobs map[string]any
			getJSON(t, base+"/jobs", &jobs)
			if _, ok := jobs["dropped"]; ok || len(jobs) != 1 {
				t.Fatalf("/jobs = %v; the relabel filter should drop job dropped", jobs)
			}
			if strategy == "per-node" {
				var got []struct{ Targets []string }
				getJSON(t, base+"/jobs/app/targets?collector_id=c-collector-1", &got)
				for _, g := range got {
					if !strings.HasPrefix(g.Targets[0], "127.0.0.3:") { // node-1's targets
						t.Fatalf("per-node gave %s to the collector on node-1", g.Targets[0])
					}
				}
			}

			if err := cs.CoreV1().Pods(ns).Delete(ctx, "c-collector-2", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, func() string {
				got := union(t, base, "c-collector-0", "c-collector-1")
				if got == want {
					return ""
				}
				return "got " + got
			})
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// union fetches each collector's targets of job app, fails on overlap, and returns the sorted
// union.
func union(t *testing.T, base string, ids ...string) string { return unionJob(t, base, "app", ids...) }

func unionJob(t *testing.T, base, job string, ids ...string) string {
	seen := map[string]string{}
	for _, id := range ids {
		var groups []struct {
			Targets []string          `json:"targets"`
			Labels  map[string]string `json:"labels"`
		}
		getJSON(t, base+"/jobs/"+url.QueryEscape(job)+"/targets?collector_id="+id, &groups)
		for _, g := range groups {
			for _, a := range g.Targets {
				if prev, ok := seen[a]; ok {
					t.Fatalf("target %s given to both %s and %s", a, prev, id)
				}
				seen[a] = id
			}
		}
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	return strings.Join(sorted(out), ",")
}

func sorted(s []string) []string { sort.Strings(s); return s }

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	var resp *http.Response
	var err error
	for i := 0; i < 50; i++ {
		if resp, err = http.Get(url); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func waitUntil(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		if last = check(); last == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("not converged; last union: %s", last)
}
