package shard

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/otelop/otelop/test/simcluster"
)

// writeLog is the write requests of a window of the audit log.
type writeLog []simcluster.AuditEvent

func readAudit(t *testing.T, path string, from int64) writeLog {
	t.Helper()
	var out writeLog
	if err := simcluster.ReadAudit(path, from, func(ev simcluster.AuditEvent) {
		if ev.IsWrite() {
			out = append(out, ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// counts is a number of writes per "resource verb".
type counts map[string]int

func (c counts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func (c counts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, c[k])
	}
	return strings.Join(parts, ", ")
}

// byShard splits the writes user made in the test's namespace into those to objects of shard s's
// collectors (every generated object and Event name starts with the collector's name) and the
// others. Writes outside the namespace are the instance's own: its Lease, and for the instance
// serving the webhooks its certificate Secret and the caBundles.
func (w writeLog) byShard(user, s string) (own counts, foreign []string) {
	own = counts{}
	for _, ev := range w {
		if ev.User.Username != user || ev.ObjectRef == nil || ev.ObjectRef.Namespace != namespace {
			continue
		}
		if strings.HasPrefix(ev.ObjectRef.Name, s+"-") {
			own[ev.Resource()+" "+ev.Verb]++
			continue
		}
		foreign = append(foreign, fmt.Sprintf("%s %s %s", ev.Verb, ev.Resource(), ev.ObjectRef.Name))
	}
	return own, foreign
}
