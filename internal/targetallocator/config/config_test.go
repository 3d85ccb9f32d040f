package config

import (
	"os"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v2"
)

// goldenFile extracts targetallocator.yaml from the ConfigMap in one of the operator's golden
// files: the allocator must read exactly what the operator writes.
func goldenFile(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../manifests/targetallocator/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var obj struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err == nil && obj.Kind == "ConfigMap" && obj.Data["targetallocator.yaml"] != "" {
			return []byte(obj.Data["targetallocator.yaml"])
		}
	}
	t.Fatalf("no targetallocator.yaml in %s", name)
	return nil
}

func TestParsesTheOperatorsFiles(t *testing.T) {
	full, err := Parse(goldenFile(t, "full.golden.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if full.AllocationStrategy != "per-node" || full.FilterStrategy != "relabel-config" || full.CollectorNotReadyGracePeriod != time.Minute || !full.AllowInsecureAuthSecrets {
		t.Fatalf("full: %+v", full)
	}
	if got := full.CollectorSelector.MatchLabels["app.kubernetes.io/component"]; got != "opentelemetry-collector" {
		t.Fatalf("collector_selector: %+v", full.CollectorSelector)
	}
	scs, err := full.Prometheus.GetScrapeConfigs()
	if err != nil || len(scs) != 2 || scs[0].JobName != "from-ta-spec" || scs[1].JobName != "pods" {
		t.Fatalf("scrape configs: %v %v", scs, err)
	}
	if time.Duration(scs[0].ScrapeInterval) != 20*time.Second {
		t.Fatalf("global scrape_interval not applied: %v", scs[0].ScrapeInterval)
	}
	cr := full.PrometheusCR
	if !cr.Enabled || cr.ScrapeInterval != 30*time.Second || cr.EvaluationInterval != time.Minute ||
		len(cr.PodMonitorSelector.MatchExpressions) != 1 || cr.ProbeSelector != nil || cr.PodMonitorNamespaceSelector == nil {
		t.Fatalf("prometheus_cr: %+v", cr)
	}

	t.Setenv(NamespaceEnv, "observability")
	sa, err := Parse(goldenFile(t, "standalone.golden.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sa.CollectorSelector != nil || sa.AllocationStrategy != "consistent-hashing" || sa.CollectorNotReadyGracePeriod != 30*time.Second || sa.CollectorNamespace != "observability" {
		t.Fatalf("standalone: %+v", sa)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse([]byte("{}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ListenAddr != ":8080" || cfg.AllocationStrategy != "consistent-hashing" || cfg.FilterStrategy != "relabel-config" ||
		cfg.CollectorNotReadyGracePeriod != 30*time.Second || cfg.HTTPS.ListenAddr != ":8443" || cfg.Prometheus == nil {
		t.Fatalf("%+v", cfg)
	}
}

// TestNoConfigSectionMeansNoScrapeConfigs: a file without a config section (the operator writes
// none when the collector lists no scrape configs and prometheus_cr finds the targets) has no
// scrape configs, and reading them is no error. The allocator exited at start on such a file.
func TestNoConfigSectionMeansNoScrapeConfigs(t *testing.T) {
	for _, in := range []string{"{}", "prometheus_cr: {enabled: true}\ncollector_selector: {matchlabels: {a: b}}"} {
		cfg, err := Parse([]byte(in), nil)
		if err != nil {
			t.Fatal(err)
		}
		scs, err := cfg.Prometheus.GetScrapeConfigs()
		if err != nil || len(scs) != 0 {
			t.Errorf("%q: scrape configs %v, error %v; want none and no error", in, scs, err)
		}
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	for in, want := range map[string]string{
		"allocation_strategy: round-robin":                       "allocation_strategy",
		"allocation_fallback_strategy: x":                        "allocation_fallback_strategy",
		"filter_strategy: other":                                 "filter_strategy",
		"collector_not_ready_grace_period: soon":                 "collector_not_ready_grace_period",
		"collector_selector: {matchlabels: {a: b}, other: 1}":    "collector_selector.other",
		"config: {scrape_configs: [{job_name: a, nope: 1}]}":     "config",
		"prometheus_cr: {enabled: true, scrape_interval: later}": "prometheus_cr.scrape_interval",
	} {
		_, err := Parse([]byte(in), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v does not name %s", in, err, want)
		}
	}
}

func TestSelectorSpellings(t *testing.T) {
	cfg, err := Parse([]byte("collector_selector:\n  matchLabels: {a: b}\n  matchExpressions: [{key: c, operator: Exists}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CollectorSelector.MatchLabels["a"] != "b" || cfg.CollectorSelector.MatchExpressions[0].Key != "c" {
		t.Fatalf("%+v", cfg.CollectorSelector)
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	cfg, err := Parse([]byte("future_key: 1\nallocation_strategy: per-node\n"), nil)
	if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "future_key") || cfg.AllocationStrategy != "per-node" {
		t.Fatalf("%v %v", cfg.Warnings, err)
	}
}

// TestScrapeClassesAreRead: prometheus_cr.scrape_classes with the Prometheus Operator's field
// names; a missing name, a name defined twice and two default classes are refused by path.
func TestScrapeClassesAreRead(t *testing.T) {
	cfg, err := Parse([]byte(`
prometheus_cr:
  enabled: true
  scrape_classes:
  - name: mtls
    default: true
    tlsConfig: {caFile: /tls/ca.crt}
    relabelings: [{targetLabel: cluster, replacement: one, action: replace}]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.PrometheusCR.ScrapeClasses
	if len(c) != 1 || c[0].Name != "mtls" || c[0].Default == nil || !*c[0].Default || c[0].TLSConfig.CAFile != "/tls/ca.crt" || len(c[0].Relabelings) != 1 {
		t.Fatalf("scrape classes: %+v", c)
	}
	for body, want := range map[string]string{
		`[{default: true}]`:      "scrape_classes[0].name: required",
		`[{name: a}, {name: a}]`: `scrape_classes[1].name: "a" is defined twice`,
		`[{name: a, default: true}, {name: b, default: true}]`: "scrape_classes[1].default",
		`[{name: a, tlsConfg: {}}]`:                            "scrape_classes",
	} {
		if _, err := Parse([]byte("prometheus_cr:\n  scrape_classes: "+body+"\n"), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", body, err, want)
		}
	}
}
