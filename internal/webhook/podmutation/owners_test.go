package podmutation

import (
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/internal/instrumentation"
)

func TestOwnerCache(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(0, 0)
	c := newOwnerCache(time.Minute)
	c.now = func() time.Time { return now }
	owners := []instrumentation.Owner{{Kind: "Deployment", Name: "shop", UID: "d"}}
	_, ok := c.get("rs")
	g.Expect(ok).To(BeFalse())
	c.put("rs", owners)
	got, ok := c.get("rs")
	g.Expect(ok).To(BeTrue())
	g.Expect(got).To(Equal(owners))
	now = now.Add(61 * time.Second)
	_, ok = c.get("rs")
	g.Expect(ok).To(BeFalse(), "expired")
	c.put("", owners)
	_, ok = c.get("")
	g.Expect(ok).To(BeFalse(), "no UID, no caching")
	for i := range ownerCacheSize + 1 {
		c.put(k8stypes.UID(strconv.Itoa(i)), owners)
	}
	g.Expect(len(c.entries)).To(BeNumerically("<=", ownerCacheSize))
}
