package bridge

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
)

// BenchmarkBridge500 measures, against envtest, the time from bridge start to an effective config
// listing 500 collectors, and the time to apply a 500-file remote configuration (each file
// changes the collector). Run: go test ./internal/opampbridge/bridge -run '^$' -bench Bridge500 -benchtime 1x .
func BenchmarkBridge500(b *testing.B) {
	const n = 500
	t := &testing.T{}
	ctx := context.Background()
	ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	createNamespace(t, ns)
	managed := map[string]string{collectors.ManagedLabel: "true"}
	for i := range n {
		createCollector(t, collectorYAML(ns, fmt.Sprintf("c-%03d", i), managed))
	}
	for b.Loop() {
		srv, err := opamptest.Start(opamptest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		cfg := testConfig(t, srv, "bench", ns)
		start := time.Now()
		r := startBridge(t, cfg, Options{})
		err = srv.Wait(5*time.Minute, "500 collectors reported", func(m map[string]*opamptest.AgentState) bool {
			for _, a := range m {
				if len(a.EffectiveConfig.GetConfigMap().GetConfigMap()) >= n {
					return true
				}
			}
			return false
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s-to-report-500")
		uid := srv.Agents()[0]
		files := map[string]*protobufs.AgentConfigFile{}
		for i := range n {
			name := fmt.Sprintf("c-%03d", i)
			files[ns+"/"+name] = &protobufs.AgentConfigFile{Body: collectorYAML(ns, name, managed, "otlp", "otlp/2")}
		}
		start = time.Now()
		hash, err := srv.PushConfig(ctx, uid, files)
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Wait(5*time.Minute, "APPLIED", statusFor(srv, hash)); err != nil {
			b.Fatal(err)
		}
		if st := srv.Agent(uid).RemoteConfigStatus; st.Status != protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED {
			b.Fatalf("status %s: %s", st.Status, st.ErrorMessage)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s-to-apply-500")
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap-inuse")
		r.cancel()
		if err := <-r.done; err != nil {
			b.Log(err)
		}
		_ = srv.Stop(ctx)
	}
}
