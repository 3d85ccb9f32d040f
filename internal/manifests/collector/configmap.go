package collector

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// configMap is <name>-collector-<hash>, key collector.yaml. With a target allocator the prometheus
// receiver is pointed at it.
func (s *state) configMap() (*corev1.ConfigMap, error) {
	content, err := s.collectorYAML()
	if err != nil {
		return nil, err
	}
	meta := s.meta(naming.ConfigMap(s.col.Name, s.hash), false)
	meta.Labels = s.labels(naming.Collector(s.col.Name), false)
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ConfigMap"),
		ObjectMeta: meta,
		Data:       map[string]string{naming.ConfigMapKey: content},
	}, nil
}

// collectorYAML is the config the collector runs with. With a target allocator (the embedded one
// of spec.targetAllocator.enabled, or the standalone one the opentelemetry.io/target-allocator
// label names, which wins) the prometheus receiver takes its targets from the allocator's Service.
// mTLS applies only with the embedded one, as upstream's does.
func (s *state) collectorYAML() (string, error) {
	taName := s.col.Name
	linked, isLinked := LinkedTargetAllocator(s.col)
	if isLinked {
		taName = linked
	}
	if !s.col.Spec.TargetAllocator.Enabled && !isLinked {
		out, err := configText(s.col.Spec.Config)
		if err != nil {
			return "", fmt.Errorf("spec.config: %w", err)
		}
		return out, nil
	}
	opts := collectorconfig.TargetAllocatorOptions{
		ServiceName: naming.TargetAllocator(taName),
		MTLS:        s.taClientTLS(),
	}
	if d := s.col.Spec.TargetAllocator.CollectorTargetReloadInterval; d != nil {
		opts.Interval = d.Duration.String()
	}
	raw, err := collectorconfig.RewriteForTargetAllocator(s.raw, opts, field.NewPath("spec", "config"))
	if err != nil {
		return "", err
	}
	out, err := rewrittenConfigText(raw)
	if err != nil {
		return "", fmt.Errorf("spec.config: %w", err)
	}
	return out, nil
}
