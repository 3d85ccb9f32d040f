package collector

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// podReadInterval bounds how often one collector's pods are read while its workload is not
// available or rolls out: pods are not cached, so each read is a list request the API server
// answers, and a workload's status changes with every pod of a rollout (each change a reconcile).
// The first read comes podReadInterval after the trouble was first seen, so a rollout or a start
// that completes sooner reads no pods at all; a crash or a failed pull is reported within
// podReadInterval of that (plus the reconcile that follows it).
const podReadInterval = 10 * time.Second

// podCheck is what the reconciler remembers of one collector's pods while its workload is not
// ready: when that was first seen, when the pods were last read, and what that read found.
type podCheck struct {
	since, read time.Time
	crash       *podCrash
}

// podChecks throttles the pod reads of every collector (see podReadInterval). It is safe for
// concurrent use; entries live only while a collector's workload is not ready.
type podChecks struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*podCheck
}

// due returns how long to wait before key's pods may be read (0: read now) and what the last read
// found (nil when there was none, or no read yet).
func (p *podChecks) due(key types.NamespacedName, now time.Time) (time.Duration, *podCrash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[types.NamespacedName]*podCheck{}
	}
	c, ok := p.m[key]
	if !ok {
		c = &podCheck{since: now}
		p.m[key] = c
	}
	next := c.since.Add(podReadInterval)
	if !c.read.IsZero() {
		next = c.read.Add(podReadInterval)
	}
	return max(next.Sub(now), 0), c.crash
}

// record keeps what a read of key's pods found at now.
func (p *podChecks) record(key types.NamespacedName, now time.Time, crash *podCrash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[key]; ok {
		c.read, c.crash = now, crash
	}
}

// forget drops key (its workload is ready, or the collector is gone).
func (p *podChecks) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, key)
}
