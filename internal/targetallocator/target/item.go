// Package target turns what service discovery reports (target groups per job) into target items
// and keeps the set of current items, telling which were added and which went away since the
// last update. Unchanged targets cost a hash and a map look-up per update: their labels are not
// rebuilt and the filter is not run again.
package target

import (
	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/prometheus/model/labels"
)

// Labels naming the node a target runs on, in the order they are consulted (the per-node
// strategy), and the EndpointSlice labels used when the target is a Node.
const (
	podNodeNameLabel      = "__meta_kubernetes_pod_node_name"
	nodeNameLabel         = "__meta_kubernetes_node_name"
	endpointNodeNameLabel = "__meta_kubernetes_endpoint_node_name"
	sliceTargetKindLabel  = "__meta_kubernetes_endpointslice_address_target_kind"
	sliceTargetNameLabel  = "__meta_kubernetes_endpointslice_address_target_name"
)

// Item is one target of one job. Items are immutable once built, except for Collector, which
// only the allocator writes (under its lock).
type Item struct {
	// JobName is the scrape job.
	JobName string
	// TargetURL is the __address__ label.
	TargetURL string
	// Labels are the group's labels overlaid with the target's: what the collector receives.
	Labels labels.Labels
	// ID identifies the item within this process (a keyed hash of job and labels): equal IDs
	// are the same target.
	ID uint64
	// Hash is a stable hash of the target's address, the same in every process and release: the
	// consistent-hashing strategy assigns by it, as upstream's does, so a restart moves no target
	// and neither does a change of the target's other labels (a pod's readiness, an annotation).
	Hash uint64
	// NodeName is the node the target runs on, "" when the labels do not say.
	NodeName string
	// Collector is the collector the target is assigned to, "" when unassigned.
	Collector string

	seen    uint64 // generation of the last update that reported the item
	dropped bool   // the filter dropped it
	key     uint64 // identity after relabelling (Set)
	dup     bool   // kept, but an equal target is handed out instead (Set)
}

// NewItem builds an item from merged labels (used by tests and by callers without groups).
func NewItem(job string, lbls labels.Labels, id uint64) *Item {
	return &Item{
		JobName:   job,
		TargetURL: lbls.Get("__address__"),
		Labels:    lbls,
		ID:        id,
		Hash:      StableHash(lbls.Get("__address__")),
		NodeName:  nodeName(lbls),
	}
}

// StableHash is the placement hash of a target address: xxhash of the address text.
func StableHash(address string) uint64 {
	return xxhash.Sum64String(address)
}

func nodeName(l labels.Labels) string {
	for _, n := range []string{podNodeNameLabel, nodeNameLabel, endpointNodeNameLabel} {
		if v := l.Get(n); v != "" {
			return v
		}
	}
	if l.Get(sliceTargetKindLabel) == "Node" {
		return l.Get(sliceTargetNameLabel)
	}
	return ""
}
