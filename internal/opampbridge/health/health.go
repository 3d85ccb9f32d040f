// Package health builds the bridge's OpAMP health tree: the bridge at the root, one child per
// collector ("namespace/name", status "<ready>/<total>"), one grandchild per pod
// ("namespace/pod"), and under each pod the health its own opamp extension reports through the
// bridge's proxy (matched by host.name). Proxied agents that match no pod hang off the root.
// Everything here is pure.
package health

import (
	"sort"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	corev1 "k8s.io/api/core/v1"
)

// Collector is one collector's input to the tree.
type Collector struct {
	// Key is "namespace/name".
	Key string
	// StatusReplicas is the collector's status.scale.statusReplicas ("<ready>/<total>").
	StatusReplicas string
	// Pods are the collector's pods.
	Pods []corev1.Pod
}

// Agent is a collector connected to the bridge's proxy.
type Agent struct {
	// UID is the agent's instance UID as a string.
	UID string
	// HostName is the agent's host.name attribute (a pod name for collectors in pods).
	HostName string
	// Health is the agent's latest reported health, or nil.
	Health *protobufs.ComponentHealth
	// StartTime is when the agent connected.
	StartTime time.Time
}

// Tree returns the health tree. start is when the bridge started.
func Tree(start time.Time, cols []Collector, agents []Agent) *protobufs.ComponentHealth {
	root := &protobufs.ComponentHealth{
		Healthy:            true,
		StartTimeUnixNano:  uint64(start.UnixNano()),
		Status:             "running",
		ComponentHealthMap: map[string]*protobufs.ComponentHealth{},
	}
	byHost := map[string][]Agent{}
	for _, a := range agents {
		byHost[a.HostName] = append(byHost[a.HostName], a)
	}
	matched := map[string]bool{}
	for _, c := range cols {
		child := &protobufs.ComponentHealth{
			Healthy:            true,
			Status:             c.StatusReplicas,
			ComponentHealthMap: map[string]*protobufs.ComponentHealth{},
		}
		for i := range c.Pods {
			p := &c.Pods[i]
			ph := podHealth(p)
			for _, a := range byHost[p.Name] {
				ph.ComponentHealthMap[a.UID] = agentHealth(a)
				matched[a.UID] = true
			}
			child.Healthy = child.Healthy && ph.Healthy
			child.ComponentHealthMap[p.Namespace+"/"+p.Name] = ph
		}
		root.ComponentHealthMap[c.Key] = child
	}
	for _, a := range agents {
		if !matched[a.UID] {
			root.ComponentHealthMap[a.UID] = agentHealth(a)
		}
	}
	return root
}

func podHealth(p *corev1.Pod) *protobufs.ComponentHealth {
	h := &protobufs.ComponentHealth{
		Status:             string(p.Status.Phase),
		Healthy:            p.Status.Phase == corev1.PodRunning && p.Status.StartTime != nil,
		ComponentHealthMap: map[string]*protobufs.ComponentHealth{},
	}
	if p.Status.StartTime != nil {
		h.StartTimeUnixNano = uint64(p.Status.StartTime.UnixNano())
	}
	return h
}

func agentHealth(a Agent) *protobufs.ComponentHealth {
	if a.Health != nil {
		return a.Health
	}
	return &protobufs.ComponentHealth{Healthy: true, Status: "connected", StartTimeUnixNano: uint64(a.StartTime.UnixNano())}
}

// SortedKeys returns the keys of a health map in order (for stable output and tests).
func SortedKeys(m map[string]*protobufs.ComponentHealth) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
