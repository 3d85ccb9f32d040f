package app

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are upstream's allocator metrics (same names) plus the number of targets moved
// between collectors, which upstream does not count.
type metrics struct {
	strategy       string
	perCollector   *prometheus.GaugeVec
	allocatable    *prometheus.GaugeVec
	unassigned     prometheus.Gauge
	remaining      prometheus.Gauge
	discovered     prometheus.Gauge
	moved          *prometheus.CounterVec
	timeToAllocate *prometheus.HistogramVec

	mu   sync.Mutex
	seen map[string]bool
}

func newMetrics(reg prometheus.Registerer, strategy string) *metrics {
	m := &metrics{
		strategy: strategy,
		perCollector: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opentelemetry_allocator_targets_per_collector",
			Help: "The number of targets for each collector."}, []string{"collector_name", "strategy"}),
		allocatable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opentelemetry_allocator_collectors_allocatable",
			Help: "Number of collectors the allocator is able to allocate to."}, []string{"strategy"}),
		unassigned: prometheus.NewGauge(prometheus.GaugeOpts{Name: "opentelemetry_allocator_targets_unassigned",
			Help: "Number of targets that could not be assigned (per-node without a collector on the node, or no collectors)."}),
		remaining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "opentelemetry_allocator_targets_remaining",
			Help: "Number of targets kept after filtering."}),
		discovered: prometheus.NewGauge(prometheus.GaugeOpts{Name: "opentelemetry_allocator_collectors_discovered",
			Help: "Number of collectors discovered."}),
		moved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opentelemetry_allocator_targets_moved_total",
			Help: "Targets that changed collector, by reason."}, []string{"reason"}),
		timeToAllocate: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opentelemetry_allocator_time_to_allocate",
			Help: "The time it takes to allocate (seconds).", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, []string{"method", "strategy"}),
		seen: map[string]bool{},
	}
	reg.MustRegister(m.perCollector, m.allocatable, m.unassigned, m.remaining, m.discovered, m.moved, m.timeToAllocate)
	return m
}

// Moved implements allocation.Observer.
func (m *metrics) Moved(reason string, n int) { m.moved.WithLabelValues(reason).Add(float64(n)) }

// Assigned implements allocation.Observer.
func (m *metrics) Assigned(per map[string]int, unassigned int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.seen {
		if _, ok := per[name]; !ok {
			m.perCollector.DeleteLabelValues(name, m.strategy)
			delete(m.seen, name)
		}
	}
	for name, n := range per {
		m.perCollector.WithLabelValues(name, m.strategy).Set(float64(n))
		m.seen[name] = true
	}
	m.allocatable.WithLabelValues(m.strategy).Set(float64(len(per)))
	m.unassigned.Set(float64(unassigned))
}
