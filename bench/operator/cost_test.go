package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadTimelineTimesEachCollectorFromItsCreate(t *testing.T) {
	log := `{"stage":"ResponseComplete","verb":"create","userAgent":"bench","objectRef":{"resource":"opentelemetrycollectors","namespace":"ns","name":"c-1"},"requestReceivedTimestamp":"2026-12-01T00:00:00.000000Z","stageTimestamp":"2026-12-01T00:00:00.010000Z"}
{"stage":"ResponseComplete","verb":"patch","userAgent":"opentelemetry-operator/v0","objectRef":{"resource":"configmaps","namespace":"ns","name":"c-1-collector-1a2b"},"requestReceivedTimestamp":"2026-12-01T00:00:02.000000Z","stageTimestamp":"2026-12-01T00:00:02.020000Z"}
{"stage":"ResponseComplete","verb":"patch","userAgent":"opentelemetry-operator/v0","objectRef":{"resource":"deployments","namespace":"ns","name":"c-1-collector"},"requestReceivedTimestamp":"2026-12-01T00:00:03.000000Z","stageTimestamp":"2026-12-01T00:00:03.040000Z"}
{"stage":"ResponseComplete","verb":"patch","userAgent":"opentelemetry-operator/v0","objectRef":{"resource":"opentelemetrycollectors","subresource":"status","namespace":"ns","name":"c-1"},"requestReceivedTimestamp":"2026-12-01T00:00:05.000000Z","stageTimestamp":"2026-12-01T00:00:05.010000Z"}
{"stage":"ResponseComplete","verb":"create","userAgent":"kube-controller-manager/v1.37.2 (linux/amd64)","objectRef":{"resource":"pods","namespace":"ns","name":"c-1-collector-x"},"requestReceivedTimestamp":"2026-12-01T00:00:04.000000Z","stageTimestamp":"2026-12-01T00:00:04.010000Z"}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	tl, err := readTimeline(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Collectors != 1 || tl.Writes != 3 {
		t.Fatalf("collectors %d, operator writes %d; want 1 and 3", tl.Collectors, tl.Writes)
	}
	if tl.FirstWrite.P50 != 2 || tl.WorkloadWrite.P50 != 3.04 || tl.LastWrite.P50 != 5.01 {
		t.Errorf("first %v, workload %v, last %v; want 2, 3.04, 5.01", tl.FirstWrite, tl.WorkloadWrite, tl.LastWrite)
	}
	if tl.ByAgentResource["kube-controller-manager pods create"] != 1 || tl.ByAgent["opentelemetry-operator"] != 3 {
		t.Errorf("by agent: %v", tl.ByAgentResource)
	}
}
