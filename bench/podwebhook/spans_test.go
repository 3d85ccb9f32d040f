package main

import (
	"context"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// A webhook call is filed under the namespace of its request's Create span, found through the
// ancestors whichever batch they arrive in; calls before since and calls whose ancestors have not
// arrived are left out.
func TestDurationsResolveTheNamespaceThroughAncestors(t *testing.T) {
	s := &spanSink{spans: map[spanKey]spanInfo{}}
	base := time.Unix(1000, 0)
	at := func(d time.Duration) uint64 { return uint64(base.Add(d).UnixNano()) }
	tr := []byte("trace-1")
	hook := &tracepb.Span{TraceId: tr, SpanId: []byte("call"), ParentSpanId: []byte("admit"), Name: webhookSpanName,
		StartTimeUnixNano: at(0), EndTimeUnixNano: at(9 * time.Millisecond),
		Attributes: []*commonpb.KeyValue{str("webhook", webhookName)},
		Events:     []*tracepb.Span_Event{{Name: "Request completed", TimeUnixNano: at(7 * time.Millisecond)}}}
	early := &tracepb.Span{TraceId: tr, SpanId: []byte("early"), ParentSpanId: []byte("admit"), Name: webhookSpanName,
		StartTimeUnixNano: at(-time.Second), EndTimeUnixNano: at(-time.Second + time.Millisecond),
		Attributes: []*commonpb.KeyValue{str("webhook", webhookName)}}
	orphan := &tracepb.Span{TraceId: []byte("trace-2"), SpanId: []byte("orphan"), ParentSpanId: []byte("missing"),
		Name: webhookSpanName, StartTimeUnixNano: at(0), EndTimeUnixNano: at(time.Millisecond),
		Attributes: []*commonpb.KeyValue{str("webhook", floorWebhookName)}}
	export := func(spans ...*tracepb.Span) {
		t.Helper()
		req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}}
		if _, err := s.Export(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	export(hook, early, orphan)
	if got, unresolved := s.durations(base); len(got) != 0 || unresolved != 2 {
		t.Fatalf("before the ancestors arrive: got %v, %d unresolved; want none, 2 unresolved", got, unresolved)
	}
	export(
		&tracepb.Span{TraceId: tr, SpanId: []byte("admit"), ParentSpanId: []byte("create"), Name: "Admit"},
		&tracepb.Span{TraceId: tr, SpanId: []byte("create"), Name: "Create",
			Attributes: []*commonpb.KeyValue{str("namespace", "bench-sidecar")}})
	got, unresolved := s.durations(base)
	want := call{total: 9 * time.Millisecond, roundTrip: 7 * time.Millisecond}
	calls := got[callKey{webhookName, "bench-sidecar"}]
	if len(got) != 1 || len(calls) != 1 || calls[0] != want || unresolved != 1 {
		t.Fatalf("got %v, %d unresolved; want one call %+v in bench-sidecar and the orphan unresolved", got, unresolved, want)
	}
}

func TestQuantileOfIsNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		if got := quantileOf(ds, q); got != want {
			t.Errorf("q%v = %s, want %s", q, got, want)
		}
	}
	if got := quantileOf(nil, 0.99); got != 0 {
		t.Errorf("empty: %s, want 0", got)
	}
}
