// Package metrics holds the bridge's Prometheus metrics: messages received from the OpAMP server,
// remote configuration applies and failures, and agents connected to the proxy.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the bridge's counters, in their own registry.
type Metrics struct {
	registry *prometheus.Registry
	messages prometheus.Counter
	applies  *prometheus.CounterVec
	files    prometheus.Histogram
	duration prometheus.Histogram
	agents   prometheus.GaugeFunc
}

// New registers the metrics; connectedAgents is read at scrape time (nil reports 0).
func New(connectedAgents func() int) *Metrics {
	if connectedAgents == nil {
		connectedAgents = func() int { return 0 }
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		messages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "opamp_bridge_server_messages_total", Help: "Messages received from the OpAMP server.",
		}),
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opamp_bridge_remote_config_applies_total", Help: "Remote configurations handled, by result (applied or failed).",
		}, []string{"result"}),
		files: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "opamp_bridge_remote_config_files", Help: "Collectors per remote configuration.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 6),
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "opamp_bridge_remote_config_apply_seconds", Help: "Time to apply a remote configuration.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 8),
		}),
		agents: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "opamp_bridge_proxy_connected_agents", Help: "Collectors connected to the bridge's OpAMP proxy.",
		}, func() float64 { return float64(connectedAgents()) }),
	}
	m.registry.MustRegister(m.messages, m.applies, m.files, m.duration, m.agents,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// MessageReceived counts one ServerToAgent message.
func (m *Metrics) MessageReceived() { m.messages.Inc() }

// ConfigApplied records one remote configuration.
func (m *Metrics) ConfigApplied(ok bool, files int, took time.Duration) {
	result := "applied"
	if !ok {
		result = "failed"
	}
	m.applies.WithLabelValues(result).Inc()
	m.files.Observe(float64(files))
	m.duration.Observe(took.Seconds())
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
