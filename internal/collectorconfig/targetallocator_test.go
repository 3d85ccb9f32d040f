package collectorconfig

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const promConfig = `
receivers:
  prometheus:
    config:
      global:
        scrape_interval: 15s
      scrape_configs:
      - job_name: a
        relabel_configs:
        - source_labels: [x]
          replacement: "$$1-$$2"
        metric_relabel_configs:
        - replacement: "$$1"
        - action: drop
        static_configs:
        - targets: ["x:1"]
    target_allocator:
      http_sd_config:
        refresh_interval: 60s
exporters: {debug: {}}
service: {pipelines: {metrics: {receivers: [prometheus], exporters: [debug]}}}
`

func TestRewriteForTargetAllocator(t *testing.T) {
	g := NewWithT(t)
	raw := mustYAML(t, promConfig)
	out, err := RewriteForTargetAllocator(raw, TargetAllocatorOptions{ServiceName: "simple-targetallocator"}, field.NewPath("spec", "config"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(roundTrip(t, out["receivers"].(map[string]any))).To(Equal(decodeJSON(t, `{"prometheus":{
		"config":{"global":{"scrape_interval":"15s"}},
		"target_allocator":{"endpoint":"http://simple-targetallocator:80","interval":"30s","collector_id":"${POD_NAME}",
		  "http_sd_config":{"refresh_interval":"60s"}}}}`)))
	g.Expect(raw).To(Equal(mustYAML(t, promConfig)), "input must not change")

	out, err = RewriteForTargetAllocator(raw, TargetAllocatorOptions{ServiceName: "s-targetallocator", Interval: "1m0s", MTLS: true}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	ta := out["receivers"].(map[string]any)["prometheus"].(map[string]any)["target_allocator"]
	g.Expect(roundTrip(t, map[string]any{"ta": ta})["ta"]).To(Equal(decodeJSON(t, `{"ta":{
		"endpoint":"https://s-targetallocator:443","interval":"1m0s","collector_id":"${POD_NAME}",
		"http_sd_config":{"refresh_interval":"60s"},
		"tls":{"ca_file":"/tls/ca.crt","cert_file":"/tls/tls.crt","key_file":"/tls/tls.key","reload_interval":"1h"}}}`)["ta"]))
}

func TestRewriteForTargetAllocatorErrors(t *testing.T) {
	for _, tc := range []struct{ name, cfg, want string }{
		{"no prometheus", `{receivers: {otlp: {}}}`, `spec.config.receivers.prometheus: Required value: the target allocator needs a prometheus receiver`},
		{"no config", `{receivers: {prometheus: {}}}`, `spec.config.receivers.prometheus.config: Required value: the prometheus receiver needs a config`},
		{"bad config", `{receivers: {prometheus: {config: []}}}`, `spec.config.receivers.prometheus.config: Invalid value: "list": must be an object`},
		{"bad target_allocator", `{receivers: {prometheus: {config: {}, target_allocator: 1}}}`, `spec.config.receivers.prometheus.target_allocator: Invalid value: "number": must be an object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := RewriteForTargetAllocator(mustYAML(t, tc.cfg), TargetAllocatorOptions{ServiceName: "x"}, field.NewPath("spec", "config"))
			g.Expect(err).To(MatchError(tc.want))
		})
	}
	_, err := RewriteForTargetAllocator(map[string]any{}, TargetAllocatorOptions{}, nil)
	NewWithT(t).Expect(err).To(HaveOccurred())
}

func TestPrometheusScrapeConfigs(t *testing.T) {
	g := NewWithT(t)
	raw := mustYAML(t, promConfig)
	scs, err := PrometheusScrapeConfigs(raw, field.NewPath("spec", "config"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(scs).To(HaveLen(1))
	g.Expect(roundTrip(t, scs[0])).To(Equal(decodeJSON(t, `{"job_name":"a",
		"relabel_configs":[{"source_labels":["x"],"replacement":"$1-$2"}],
		"metric_relabel_configs":[{"replacement":"$1"},{"action":"drop"}],
		"static_configs":[{"targets":["x:1"]}]}`)))
	g.Expect(raw).To(Equal(mustYAML(t, promConfig)), "input must not change")
	g.Expect(PrometheusGlobalConfig(raw)).To(Equal(map[string]any{"scrape_interval": "15s"}))

	scs, err = PrometheusScrapeConfigs(mustYAML(t, `{receivers: {otlp: {}}}`), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(scs).To(BeNil())

	_, err = PrometheusScrapeConfigs(mustYAML(t, `{receivers: {prometheus: {config: {scrape_configs: [{relabel_configs: [{replacement: 1}]}]}}}}`),
		field.NewPath("spec", "config"))
	g.Expect(err).To(MatchError(`spec.config.receivers.prometheus.config.scrape_configs[0].relabel_configs[0].replacement: Invalid value: "number": must be a string`))
}
