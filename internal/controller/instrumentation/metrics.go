package instrumentation

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controller's Prometheus metrics, on the manager's /metrics.
var (
	scanSeconds = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "otelop_instrumentation_scan_duration_seconds",
		Help: "How long the last catch-up scan of workloads and pods took.",
	})
	scanRequests = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "otelop_instrumentation_scan_list_requests",
		Help: "List requests (pages) the last catch-up scan sent.",
	})
	scanPods = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "otelop_instrumentation_scan_pods",
		Help: "Pods (metadata) the last catch-up scan read.",
	})
	pendingWorkloads = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "otelop_instrumentation_pending_workloads",
		Help: "Workloads that ask for an Instrumentation but run pods admitted without it (summed over Instrumentations).",
	})
	scansTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "otelop_instrumentation_scans_total",
		Help: "Catch-up scans started (at start, every interval, and after Instrumentation changes that affect the outcome, coalesced).",
	})
	restartsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "otelop_instrumentation_workload_restarts_total",
		Help: "Workloads the catch-up controller restarted (for Instrumentations and sidecar collectors).",
	})
	outdatedSidecarWorkloads = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "otelop_sidecar_outdated_workloads",
		Help: "Workloads that ask for a sidecar collector but run pods without its current generation (summed over collectors).",
	})
)

func init() {
	metrics.Registry.MustRegister(scanSeconds, scanRequests, scanPods, pendingWorkloads, scansTotal, restartsTotal, outdatedSidecarWorkloads)
}
