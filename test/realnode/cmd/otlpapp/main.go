// Command otlpapp is the application of the real-node tests: every second it sends one span named
// after $SPAN_NAME (default "otelop-realnode") over OTLP/gRPC to $OTLP_ENDPOINT (default
// localhost:4317), the address an injected sidecar collector listens on, and logs each result.
// At start it logs its OpenTelemetry environment (every OTEL_* variable and JAVA_TOOL_OPTIONS),
// and the start of each file a -javaagent: option in JAVA_TOOL_OPTIONS names, so that tests see
// what an auto-instrumentation injection gave the process.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	endpoint := env("OTLP_ENDPOINT", "localhost:4317")
	name := env("SPAN_NAME", "otelop-realnode")
	logEnvironment()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	client := coltracepb.NewTraceServiceClient(conn)
	for i := 0; ; i++ {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.Export(sctx, request(name, i))
		cancel()
		if err != nil {
			log.Printf("export %d to %s: %v", i, endpoint, err)
		} else {
			log.Printf("exported span %q #%d to %s", name, i, endpoint)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func request(name string, i int) *coltracepb.ExportTraceServiceRequest {
	traceID, spanID := make([]byte, 16), make([]byte, 8)
	_, _ = rand.Read(traceID)
	_, _ = rand.Read(spanID)
	now := uint64(time.Now().UnixNano())
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "otlpapp")}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId: traceID, SpanId: spanID, Name: name, Kind: tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: now - 1000, EndTimeUnixNano: now,
			Attributes: []*commonpb.KeyValue{str("sequence", fmt.Sprint(i))},
		}}}},
	}}}
}

// logEnvironment logs "env KEY=VALUE" for each OTEL_* variable and JAVA_TOOL_OPTIONS, sorted, and
// "javaagent PATH: N bytes: CONTENT" (or the error reading it) for each -javaagent:PATH.
func logEnvironment() {
	var lines []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "JAVA_TOOL_OPTIONS=") {
			lines = append(lines, kv)
		}
	}
	sort.Strings(lines)
	for _, kv := range lines {
		log.Printf("env %s", kv)
	}
	for _, opt := range strings.Fields(os.Getenv("JAVA_TOOL_OPTIONS")) {
		path, ok := strings.CutPrefix(opt, "-javaagent:")
		if !ok {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			log.Printf("javaagent %s: %v", path, err)
			continue
		}
		head := data
		if len(head) > 64 {
			head = head[:64]
		}
		log.Printf("javaagent %s: %d bytes: %q", path, len(data), head)
	}
}
