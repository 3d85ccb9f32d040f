package shard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/otelop/otelop/test/simcluster"
)

// auditLine is one made-up audit event as the API server writes it (level Metadata).
func auditLine(user, verb, resource, sub, name string, code int) string {
	return fmt.Sprintf(`{"stage":"ResponseComplete","verb":%q,"user":{"username":%q},`+
		`"objectRef":{"resource":%q,"subresource":%q,"namespace":%q,"name":%q},"responseStatus":{"code":%d}}`,
		verb, user, resource, sub, namespace, name, code)
}

func parseLog(t *testing.T, lines ...string) writeLog {
	t.Helper()
	var w writeLog
	for _, l := range lines {
		var ev simcluster.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.IsWrite() {
			w = append(w, ev)
		}
	}
	return w
}

// convergedLines are the writes of a shard that converged collector c.
func convergedLines(user, c string) []string {
	return []string{
		auditLine(user, "create", "deployments", "", c+"-collector", 201),
		auditLine(user, "create", "configmaps", "", c+"-collector-0123abcd", 201),
		auditLine(user, "create", "serviceaccounts", "", c+"-collector", 201),
		auditLine(user, "create", "services", "", c+"-collector", 201),
		auditLine(user, "create", "services", "", c+"-collector-headless", 201),
		auditLine(user, "create", "services", "", c+"-collector-monitoring", 201),
		auditLine(user, "create", "poddisruptionbudgets", "", c+"-collector", 201),
		auditLine(user, "create", "networkpolicies", "", c+"-collector-networkpolicy", 201),
		auditLine(user, "patch", "opentelemetrycollectors", "status", c, 200),
	}
}

// TestMissingFindsEachAbsentWrite checks the audit assertion itself: it passes on a trail that
// holds every write, and names each collector and write that a trail lacks (a shard that wrote
// nothing, a failed create, another user's write, a write to a similarly named object).
func TestMissingFindsEachAbsentWrite(t *testing.T) {
	const a = "otelop-shard-a"
	full := append(convergedLines(a, "a-0000"), convergedLines(a, "a-0001")...)
	if got := parseLog(t, full...).missing(a, []string{"a-0000", "a-0001"}, createdWrites); got != nil {
		t.Fatalf("a complete trail: missing %v, want none", got)
	}

	if got := parseLog(t).missing(a, []string{"a-0000"}, createdWrites); len(got) != len(createdWrites) {
		t.Errorf("a shard that wrote nothing: %d missing writes %v, want %d", len(got), got, len(createdWrites))
	}

	lines := convergedLines(a, "a-0000")
	lines[0] = auditLine(a, "create", "deployments", "", "a-0000-collector", 409) // failed
	lines[1] = auditLine("someone-else", "create", "configmaps", "", "a-0000-collector-0123abcd", 201)
	lines[2] = auditLine(a, "create", "serviceaccounts", "", "a-00001-collector", 201) // another collector's
	lines[8] = auditLine(a, "get", "opentelemetrycollectors", "status", "a-0000", 200) // not a write
	got := parseLog(t, lines...).missing(a, []string{"a-0000"}, createdWrites)
	want := []string{
		"a-0000: create deployments a-0000-collector",
		"a-0000: create configmaps a-0000-collector-*",
		"a-0000: create serviceaccounts a-0000-collector",
		"a-0000: patch/update opentelemetrycollectors/status a-0000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("missing:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// After a change, creates do not count: the Deployment must have been applied (patched).
	if got := parseLog(t, convergedLines(a, "a-0000")...).missing(a, []string{"a-0000"}, changedWrites); len(got) != 1 ||
		got[0] != "a-0000: patch/update deployments a-0000-collector" {
		t.Errorf("a changed collector whose Deployment was only created: missing %v, want the Deployment patch", got)
	}
}
