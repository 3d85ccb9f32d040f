package targetallocator

import (
	"crypto/sha256"
	"encoding/hex"

	yamlv2 "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// ConfigFile renders targetallocator.yaml with the keys and layout of upstream's file, which the
// target allocator binary reads. It is written with the YAML v2 encoder, as upstream's is, so that
// the same resource gives the same bytes (and pod template hash): keys sorted, label selectors as
// matchlabels/matchexpressions, durations as Go duration strings. The keys are:
//   - allocation_strategy (consistent-hashing when empty), allocation_fallback_strategy with the
//     fallback gate, filter_strategy;
//   - collector_selector: the collector's pod selector labels, null without a collector;
//   - config.global and config.scrape_configs, each only when not empty (see Build for where they
//     come from);
//   - prometheus_cr when spec.prometheusCR.enabled, with intervals, protocols, scrape classes,
//     namespace lists and the eight selectors;
//   - https with mutual TLS (see MTLSEnabled): the listener on 8443 and the files of the mounted
//     serving certificate Secret;
//   - allow_insecure_auth_secrets when true and collector_not_ready_grace_period when set.
func ConfigFile(ta v1alpha1.TargetAllocator, collector *v1beta1.OpenTelemetryCollector, opts Options) ([]byte, error) {
	spec := ta.Spec
	global := spec.GlobalConfig.Object
	configs, err := manifestutils.TargetAllocatorScrapeConfigs(ta, collector)
	if err != nil {
		return nil, err
	}
	scrape := make([]any, 0, len(configs))
	for _, sc := range configs {
		scrape = append(scrape, sc)
	}
	var collectorSelector *metav1.LabelSelector
	if collector != nil {
		collectorSelector = &metav1.LabelSelector{MatchLabels: CollectorSelectorLabels(collector)}
		if len(global) == 0 {
			global = collectorconfig.PrometheusGlobalConfig(map[string]any{"receivers": collector.Spec.Config.Receivers.Object})
		}
	}

	cfg := map[string]any{"collector_selector": collectorSelector, "filter_strategy": string(spec.FilterStrategy)}
	prom := map[string]any{}
	if len(global) > 0 {
		prom["global"] = global
	}
	if len(scrape) > 0 {
		prom["scrape_configs"] = scrape
	}
	if len(prom) > 0 {
		cfg["config"] = prom
	}
	cfg["allocation_strategy"] = string(v1beta1.TargetAllocatorAllocationStrategyConsistentHashing)
	if spec.AllocationStrategy != "" {
		cfg["allocation_strategy"] = string(spec.AllocationStrategy)
	}
	if opts.FallbackStrategy {
		cfg["allocation_fallback_strategy"] = string(v1beta1.TargetAllocatorAllocationStrategyConsistentHashing)
	}
	if spec.PrometheusCR.Enabled {
		cfg["prometheus_cr"] = prometheusCR(spec.PrometheusCR)
	}
	if MTLSEnabled(spec.Mtls, spec.PrometheusCR.Enabled, opts.MTLS) {
		cfg["https"] = httpsSection()
	}
	if spec.AllowInsecureAuthSecrets {
		cfg["allow_insecure_auth_secrets"] = true
	}
	if d := spec.CollectorNotReadyGracePeriod; d != nil {
		cfg["collector_not_ready_grace_period"] = d.Duration
	}
	return yamlv2.Marshal(cfg)
}

// prometheusCR is the prometheus_cr section.
func prometheusCR(p v1beta1.TargetAllocatorPrometheusCR) map[string]any {
	out := map[string]any{"enabled": true}
	if p.ScrapeInterval != nil {
		out["scrape_interval"] = p.ScrapeInterval.Duration
	}
	if p.EvaluationInterval != nil {
		out["evaluation_interval"] = p.EvaluationInterval.Duration
	}
	if p.ScrapeProtocols != nil {
		out["scrape_protocols"] = p.ScrapeProtocols
	}
	if p.ScrapeClasses != nil {
		classes := make([]any, 0, len(p.ScrapeClasses))
		for _, c := range p.ScrapeClasses {
			classes = append(classes, c.Object)
		}
		out["scrape_classes"] = classes
	}
	for key, list := range map[string][]string{
		"allow_namespaces":  p.AllowNamespaces,
		"deny_namespaces":   p.DenyNamespaces,
		"secret_namespaces": p.SecretNamespaces,
	} {
		if list != nil {
			out[key] = list
		}
	}
	if p.DenyFSAccessThroughSMs {
		out["deny_fs_access_through_sms"] = true
	}
	for key, sel := range map[string]*metav1.LabelSelector{
		"service_monitor_selector":           p.ServiceMonitorSelector,
		"service_monitor_namespace_selector": p.ServiceMonitorNamespaceSelector,
		"pod_monitor_selector":               p.PodMonitorSelector,
		"pod_monitor_namespace_selector":     p.PodMonitorNamespaceSelector,
		"scrape_config_selector":             p.ScrapeConfigSelector,
		"scrape_config_namespace_selector":   p.ScrapeConfigNamespaceSelector,
		"probe_selector":                     p.ProbeSelector,
		"probe_namespace_selector":           p.ProbeNamespaceSelector,
	} {
		out[key] = sel
	}
	return out
}

// configMap holds targetallocator.yaml.
func (s *state) configMap(data []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ConfigMap"),
		ObjectMeta: s.meta(Name(s.ta.Name)),
		Data:       map[string]string{ConfigMapKey: string(data)},
	}
}

// configHash is the sha256 of the configuration file, as upstream computes it.
func configHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// HashOf returns the configuration hash the Deployment's pod template carries for ta.
func HashOf(ta v1alpha1.TargetAllocator, collector *v1beta1.OpenTelemetryCollector, opts Options) (string, error) {
	data, err := ConfigFile(ta, collector, opts)
	if err != nil {
		return "", err
	}
	return configHash(data), nil
}
