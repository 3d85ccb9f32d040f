package manifestutils

import "maps"

// Annotations of the pod template besides the custom resource's own.
const (
	// ConfigHashAnnotation holds the sha256 of the collector config, so that a config change rolls
	// the pods.
	ConfigHashAnnotation = "opentelemetry-operator-config/sha256"
	// PrometheusScrapeAnnotation, PrometheusPortAnnotation and PrometheusPathAnnotation tell
	// annotation-based Prometheus scrapers where the collector's own metrics are.
	PrometheusScrapeAnnotation = "prometheus.io/scrape"
	PrometheusPortAnnotation   = "prometheus.io/port"
	PrometheusPathAnnotation   = "prometheus.io/path"
)

// Annotations returns the custom resource's annotations that filter keeps; never nil.
func Annotations(annotations map[string]string, filter Filter) map[string]string {
	return filter.Apply(annotations)
}

// PodAnnotations returns the pod template annotations: spec.podAnnotations, then the resource's
// annotations that are not already set (both filtered), then the prometheus.io annotations unless
// disabled or already set, and finally the config hash.
func PodAnnotations(podAnnotations, annotations map[string]string, filter Filter, prometheus bool, configHash string) map[string]string {
	out := filter.Apply(podAnnotations)
	for k, v := range annotations {
		if _, ok := out[k]; !ok && !filter.Drops(k) {
			out[k] = v
		}
	}
	if prometheus {
		for k, v := range map[string]string{
			PrometheusScrapeAnnotation: "true",
			PrometheusPortAnnotation:   "8888",
			PrometheusPathAnnotation:   "/metrics",
		} {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	out[ConfigHashAnnotation] = configHash
	return out
}

// Clone returns a copy of m; nil stays nil.
func Clone(m map[string]string) map[string]string { return maps.Clone(m) }
