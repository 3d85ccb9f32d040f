package podmutation

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/internal/instrumentation"
)

// ownerCache remembers, for a short while, the owners of the ReplicaSets and Jobs the webhook
// read, by UID: the pods of one rollout share their ReplicaSet, so a rollout costs one read
// instead of one per pod. A UID names one object for its whole life, and an owner reference
// changes only when a controller orphans or adopts the object, which the TTL bounds. The cache
// holds at most ownerCacheSize entries (it is emptied when full).
type ownerCache struct {
	mu      sync.Mutex
	entries map[types.UID]ownerEntry
	ttl     time.Duration
	now     func() time.Time
}

type ownerEntry struct {
	owners  []instrumentation.Owner
	expires time.Time
}

const ownerCacheSize = 4096

func newOwnerCache(ttl time.Duration) *ownerCache {
	return &ownerCache{entries: map[types.UID]ownerEntry{}, ttl: ttl, now: time.Now}
}

func (c *ownerCache) get(uid types.UID) ([]instrumentation.Owner, bool) {
	if c == nil || uid == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[uid]
	if !ok || c.now().After(e.expires) {
		return nil, false
	}
	return e.owners, true
}

func (c *ownerCache) put(uid types.UID, owners []instrumentation.Owner) {
	if c == nil || uid == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= ownerCacheSize {
		clear(c.entries)
	}
	c.entries[uid] = ownerEntry{owners: owners, expires: c.now().Add(c.ttl)}
}
