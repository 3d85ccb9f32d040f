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

// write is a request a shard must have made for each of its collectors: one of verbs on resource,
// to the object that name gives for the collector (with prefix: to any object whose name starts
// with it). Only a request the API server completed with a 2xx code counts.
type write struct {
	verbs    []string
	resource string
	name     func(collector string) string
	prefix   bool
}

func (w write) describe(collector string) string {
	name := w.name(collector)
	if w.prefix {
		name += "*"
	}
	return strings.Join(w.verbs, "/") + " " + w.resource + " " + name
}

func withSuffix(s string) func(string) string { return func(c string) string { return c + s } }

func itself(c string) string { return c }

// createdWrites are what a shard's audit trail holds for each deployment-mode collector it
// converged: the create of every object generated for the test's configuration (the applier
// creates what is missing) and a write of its status.
var createdWrites = []write{
	{verbs: []string{"create"}, resource: "deployments", name: withSuffix("-collector")},
	{verbs: []string{"create"}, resource: "configmaps", name: withSuffix("-collector-"), prefix: true},
	{verbs: []string{"create"}, resource: "serviceaccounts", name: withSuffix("-collector")},
	{verbs: []string{"create"}, resource: "services", name: withSuffix("-collector")},
	{verbs: []string{"create"}, resource: "services", name: withSuffix("-collector-headless")},
	{verbs: []string{"create"}, resource: "services", name: withSuffix("-collector-monitoring")},
	{verbs: []string{"create"}, resource: "poddisruptionbudgets", name: withSuffix("-collector")},
	{verbs: []string{"create"}, resource: "networkpolicies", name: withSuffix("-collector-networkpolicy")},
	{verbs: []string{"patch", "update"}, resource: "opentelemetrycollectors/status", name: itself},
}

// changedWrites are what a shard writes for a collector whose spec.replicas changed: the
// Deployment (applied) and the status at the new generation.
var changedWrites = []write{
	{verbs: []string{"patch", "update"}, resource: "deployments", name: withSuffix("-collector")},
	{verbs: []string{"patch", "update"}, resource: "opentelemetrycollectors/status", name: itself},
}

// missing returns, for every collector that lacks one of want among user's successful writes in
// the test's namespace, a line "collector: verb resource name" per missing write; nil when each
// collector has all of them.
func (w writeLog) missing(user string, collectors []string, want []write) []string {
	made := map[string][]string{} // "verb resource" -> object names
	for _, ev := range w {
		if ev.User.Username != user || ev.ObjectRef == nil || ev.ObjectRef.Namespace != namespace ||
			ev.ResponseStatus == nil || ev.ResponseStatus.Code < 200 || ev.ResponseStatus.Code > 299 {
			continue
		}
		k := ev.Verb + " " + ev.Resource()
		made[k] = append(made[k], ev.ObjectRef.Name)
	}
	has := func(verb, resource, name string, prefix bool) bool {
		for _, got := range made[verb+" "+resource] {
			if got == name || prefix && strings.HasPrefix(got, name) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, c := range collectors {
		for _, wr := range want {
			found := false
			for _, verb := range wr.verbs {
				found = found || has(verb, wr.resource, wr.name(c), wr.prefix)
			}
			if !found {
				out = append(out, c+": "+wr.describe(c))
			}
		}
	}
	return out
}

// firstOf is at most n of lines, joined, with how many were left out.
func firstOf(lines []string, n int) string {
	if len(lines) <= n {
		return strings.Join(lines, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(lines[:n], "; "), len(lines)-n)
}
