package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(name string, phase corev1.PodPhase, started bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Status: corev1.PodStatus{Phase: phase}}
	if started {
		t := metav1.NewTime(time.Unix(100, 0))
		p.Status.StartTime = &t
	}
	return p
}

func TestTree(t *testing.T) {
	start := time.Unix(50, 0)
	tests := []struct {
		name        string
		cols        []Collector
		agents      []Agent
		wantRoot    []string
		wantHealthy map[string]bool
		check       func(g *WithT, root *protobufs.ComponentHealth)
	}{
		{name: "empty", wantRoot: []string{}},
		{
			name:        "all pods running",
			cols:        []Collector{{Key: "ns/a", StatusReplicas: "2/2", Pods: []corev1.Pod{pod("a-1", corev1.PodRunning, true), pod("a-2", corev1.PodRunning, true)}}},
			wantRoot:    []string{"ns/a"},
			wantHealthy: map[string]bool{"ns/a": true},
			check: func(g *WithT, root *protobufs.ComponentHealth) {
				g.Expect(root.ComponentHealthMap["ns/a"].Status).To(Equal("2/2"))
				g.Expect(SortedKeys(root.ComponentHealthMap["ns/a"].ComponentHealthMap)).To(Equal([]string{"ns/a-1", "ns/a-2"}))
			},
		},
		{
			name:        "a pending pod makes the collector unhealthy",
			cols:        []Collector{{Key: "ns/a", StatusReplicas: "1/2", Pods: []corev1.Pod{pod("a-1", corev1.PodRunning, true), pod("a-2", corev1.PodPending, false)}}},
			wantRoot:    []string{"ns/a"},
			wantHealthy: map[string]bool{"ns/a": false},
		},
		{
			name: "proxied agent nests under its pod; unmatched goes to the root",
			cols: []Collector{{Key: "ns/a", Pods: []corev1.Pod{pod("a-1", corev1.PodRunning, true)}}},
			agents: []Agent{
				{UID: "u1", HostName: "a-1", Health: &protobufs.ComponentHealth{Healthy: false, LastError: "boom"}},
				{UID: "u2", HostName: "laptop"},
			},
			wantRoot: []string{"ns/a", "u2"},
			check: func(g *WithT, root *protobufs.ComponentHealth) {
				g.Expect(root.ComponentHealthMap["ns/a"].ComponentHealthMap["ns/a-1"].ComponentHealthMap["u1"].LastError).To(Equal("boom"))
				g.Expect(root.ComponentHealthMap["u2"].Healthy).To(BeTrue())
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			root := Tree(start, tt.cols, tt.agents)
			g.Expect(root.Healthy).To(BeTrue())
			g.Expect(root.StartTimeUnixNano).To(Equal(uint64(start.UnixNano())))
			g.Expect(SortedKeys(root.ComponentHealthMap)).To(Equal(tt.wantRoot))
			for k, want := range tt.wantHealthy {
				g.Expect(root.ComponentHealthMap[k].Healthy).To(Equal(want), k)
			}
			if tt.check != nil {
				tt.check(g, root)
			}
		})
	}
}
