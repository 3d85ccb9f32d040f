package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// The API server's tracing (kube-apiserver --tracing-config-file) gives every webhook call its own
// span, "Call mutating webhook", from building the request to applying the patch: the exact
// duration of each admission, where the apiserver_admission_webhook_admission_duration_seconds
// histogram only has 5, 25 and 100 ms buckets. The span's ancestors include the request's
// "Create" span, whose "namespace" attribute tells the case.
const webhookSpanName = "Call mutating webhook"

type spanKey struct{ trace, span string }

type spanInfo struct {
	parent    spanKey
	namespace string // the request's namespace attribute, when the span has one
	webhook   string // the webhook attribute of a webhook call
	start     time.Time
	duration  time.Duration
	roundTrip time.Duration // to the "Request completed" event: the call without applying the patch
}

// spanSink is an OTLP/gRPC trace receiver on 127.0.0.1 that keeps what it needs of every span.
type spanSink struct {
	coltracepb.UnimplementedTraceServiceServer
	addr string
	srv  *grpc.Server

	mu    sync.Mutex
	spans map[spanKey]spanInfo
	calls []spanKey // webhook-call spans
}

func startSpanSink() (*spanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &spanSink{addr: ln.Addr().String(), srv: grpc.NewServer(), spans: map[spanKey]spanInfo{}}
	coltracepb.RegisterTraceServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// tracingConfig writes the API server's tracing configuration (every request sampled, exported
// to the sink) into dir and returns the kube-apiserver flag that loads it.
func (s *spanSink) tracingConfig(dir string) (string, error) {
	path := filepath.Join(dir, "tracing.yaml")
	text := fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: 1000000\n", s.addr)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return "--tracing-config-file=" + path, nil
}

func (s *spanSink) stop() { s.srv.Stop() }

// Export implements the OTLP trace service.
func (s *spanSink) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				k := spanKey{string(sp.GetTraceId()), string(sp.GetSpanId())}
				info := spanInfo{parent: spanKey{string(sp.GetTraceId()), string(sp.GetParentSpanId())},
					start:    time.Unix(0, int64(sp.GetStartTimeUnixNano())),
					duration: time.Duration(sp.GetEndTimeUnixNano() - sp.GetStartTimeUnixNano())}
				for _, ev := range sp.GetEvents() {
					if ev.GetName() == "Request completed" {
						info.roundTrip = time.Duration(ev.GetTimeUnixNano() - sp.GetStartTimeUnixNano())
					}
				}
				for _, kv := range sp.GetAttributes() {
					switch kv.GetKey() {
					case "namespace":
						info.namespace = kv.GetValue().GetStringValue()
					case "webhook":
						info.webhook = kv.GetValue().GetStringValue()
					}
				}
				s.spans[k] = info
				if sp.GetName() == webhookSpanName {
					s.calls = append(s.calls, k)
				}
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// callKey is a webhook call's webhook and namespace.
type callKey struct{ webhook, namespace string }

// call is one webhook call's duration, whole and to the end of the HTTP round trip.
type call struct{ total, roundTrip time.Duration }

// durations returns the durations of the webhook calls that started at since or later, by webhook
// and namespace; calls whose namespace is not known yet (their ancestors not exported yet) are
// counted in unresolved.
func (s *spanSink) durations(since time.Time) (out map[callKey][]call, unresolved int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out = map[callKey][]call{}
	for _, k := range s.calls {
		info := s.spans[k]
		if info.start.Before(since) {
			continue
		}
		ns := ""
		for p, hops := info.parent, 0; ns == "" && hops < 20; hops++ {
			anc, ok := s.spans[p]
			if !ok {
				break
			}
			ns, p = anc.namespace, anc.parent
		}
		if ns == "" {
			unresolved++
			continue
		}
		ck := callKey{info.webhook, ns}
		out[ck] = append(out[ck], call{info.duration, info.roundTrip})
	}
	return out, unresolved
}
