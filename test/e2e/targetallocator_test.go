package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/targetallocator/app"
	"github.com/otelop/otelop/internal/targetallocator/config"
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
// targetAllocator.enabled on the simulated cluster; our allocator runs as a local process on
// loopback (standing for the generated Deployment's pod) with the configuration file the
// operator wrote into the <name>-targetallocator ConfigMap, and finds the StatefulSet's pods:
// each pod's answer is disjoint from the others' and together they are every target.
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

	path := filepath.Join(t.TempDir(), "targetallocator.yaml")
	g.Expect(os.WriteFile(path, []byte(cm.Data["targetallocator.yaml"]), 0o600)).To(Succeed())
	t.Setenv(config.NamespaceEnv, ns) // as the generated Deployment sets it
	cfg, err := config.LoadFile(path, nil)
	g.Expect(err).NotTo(HaveOccurred())
	cfg.KubeConfigPath = cluster.Kubeconfig
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	cfg.ListenAddr = l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Log("target allocator stopped:", err)
		}
	}()

	pods := []string{"scraper-collector-0", "scraper-collector-1", "scraper-collector-2"}
	sort.Strings(targets)
	g.Eventually(func() (string, error) {
		seen := map[string]string{}
		for _, pod := range pods {
			var groups []struct {
				Targets []string `json:"targets"`
			}
			resp, err := http.Get("http://" + cfg.ListenAddr + "/jobs/apps/targets?collector_id=" + pod)
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
		var got []string
		for a := range seen {
			got = append(got, a)
		}
		sort.Strings(got)
		return strings.Join(got, ","), nil
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Equal(strings.Join(targets, ",")))
}
