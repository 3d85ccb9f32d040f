package collector

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
)

// Validate returns every problem of otelcol at once, each with its field path, plus warnings: the
// structural checks of collectorconfig.Validate on spec.config, and upstream's webhook rules (mode
// restrictions, target allocator, ports, autoscaler, ingress). It does not check RBAC or call the
// API server; the webhook does that.
func Validate(otelcol v1beta1.OpenTelemetryCollector, opts Options) (field.ErrorList, []string) {
	spec := &otelcol.Spec
	specPath := field.NewPath("spec")
	cfg := collectorconfig.Parse(RawConfig(spec.Config))
	errs, warnings := collectorconfig.Validate(cfg, specPath.Child("config"))

	mode := spec.Mode
	notIn := func(p *field.Path, what string) {
		errs = append(errs, field.Forbidden(p, fmt.Sprintf("%s is not supported in mode %s", what, mode)))
	}
	if mode != v1beta1.ModeStatefulSet {
		if len(spec.VolumeClaimTemplates) > 0 {
			notIn(specPath.Child("volumeClaimTemplates"), "volumeClaimTemplates")
		}
		if spec.PersistentVolumeClaimRetentionPolicy != nil {
			notIn(specPath.Child("persistentVolumeClaimRetentionPolicy"), "persistentVolumeClaimRetentionPolicy")
		}
	}
	if mode == v1beta1.ModeSidecar {
		if len(spec.Tolerations) > 0 {
			notIn(specPath.Child("tolerations"), "tolerations")
		}
		if spec.PriorityClassName != "" {
			notIn(specPath.Child("priorityClassName"), "priorityClassName")
		}
		if spec.Affinity != nil {
			notIn(specPath.Child("affinity"), "affinity")
		}
		if len(spec.AdditionalContainers) > 0 {
			notIn(specPath.Child("additionalContainers"), "additionalContainers")
		}
		if spec.Ingress.Type == v1beta1.IngressTypeIngress {
			notIn(specPath.Child("ingress", "type"), "ingress")
		}
	}
	if mode != v1beta1.ModeDaemonSet && spec.DaemonSetUpdateStrategy.Type != "" {
		notIn(specPath.Child("daemonSetUpdateStrategy"), "daemonSetUpdateStrategy")
	}
	if mode != v1beta1.ModeDeployment && spec.DeploymentUpdateStrategy.Type != "" {
		notIn(specPath.Child("deploymentUpdateStrategy"), "deploymentUpdateStrategy")
	}
	errs = append(errs, validateTargetAllocator(otelcol, cfg, specPath.Child("targetAllocator"))...)
	errs = append(errs, validatePorts(spec.Ports, specPath.Child("ports"))...)
	errs = append(errs, validateAutoscaler(spec, specPath)...)
	if spec.Ingress.RuleType == v1beta1.IngressRuleTypeSubdomain && (spec.Ingress.Hostname == "" || spec.Ingress.Hostname == "*") {
		errs = append(errs, field.Required(specPath.Child("ingress", "hostname"), "a hostname is needed with ruleType subdomain"))
	}
	if _, err := Build(otelcol, opts); err != nil {
		errs = append(errs, field.InternalError(specPath, err))
	}
	return errs, warnings
}

func validateTargetAllocator(otelcol v1beta1.OpenTelemetryCollector, cfg *collectorconfig.Config, p *field.Path) field.ErrorList {
	ta := &otelcol.Spec.TargetAllocator
	if !ta.Enabled {
		return nil
	}
	var errs field.ErrorList
	mode := otelcol.Spec.Mode
	if mode != v1beta1.ModeStatefulSet && mode != v1beta1.ModeDaemonSet {
		errs = append(errs, field.Forbidden(p.Child("enabled"), fmt.Sprintf("a target allocator is not supported in mode %s", mode)))
	}
	perNode := ta.AllocationStrategy == v1beta1.TargetAllocatorAllocationStrategyPerNode
	if mode == v1beta1.ModeDaemonSet && !perNode {
		errs = append(errs, field.Invalid(p.Child("allocationStrategy"), ta.AllocationStrategy, "mode daemonset needs allocation strategy per-node"))
	}
	if perNode && mode != v1beta1.ModeDaemonSet {
		errs = append(errs, field.Invalid(p.Child("allocationStrategy"), ta.AllocationStrategy, "allocation strategy per-node needs mode daemonset"))
	}
	if _, err := collectorconfig.PrometheusScrapeConfigs(cfg.Raw(), field.NewPath("spec", "config")); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "config", "receivers", "prometheus"), "", err.Error()))
	}
	return errs
}

func validatePorts(ports []v1beta1.PortsSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, port := range ports {
		for _, msg := range validation.IsValidPortName(port.Name) {
			errs = append(errs, field.Invalid(p.Index(i).Child("name"), port.Name, msg))
		}
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			errs = append(errs, field.Invalid(p.Index(i).Child("port"), port.Port, msg))
		}
	}
	return errs
}

func validateAutoscaler(spec *v1beta1.OpenTelemetryCollectorSpec, p *field.Path) field.ErrorList {
	a := spec.Autoscaler
	if a == nil {
		return nil
	}
	ap := p.Child("autoscaler")
	var errs field.ErrorList
	if a.MinReplicas != nil && a.MaxReplicas == nil {
		errs = append(errs, field.Required(ap.Child("maxReplicas"), "maxReplicas must be set when minReplicas is set"))
	}
	if a.MaxReplicas == nil {
		return errs
	}
	maxR := *a.MaxReplicas
	if spec.Replicas != nil && *spec.Replicas > maxR {
		errs = append(errs, field.Invalid(p.Child("replicas"), *spec.Replicas, "must not be greater than autoscaler.maxReplicas"))
	}
	minR := a.MinReplicas
	if minR == nil {
		minR = spec.Replicas
	}
	if minR != nil && *minR > maxR {
		errs = append(errs, field.Invalid(ap.Child("minReplicas"), *minR, "must not be greater than maxReplicas"))
	}
	if b := a.Behavior; b != nil {
		for _, r := range []struct {
			name  string
			rules *autoscalingv2.HPAScalingRules
		}{{"scaleDown", b.ScaleDown}, {"scaleUp", b.ScaleUp}} {
			name, rules := r.name, r.rules
			if rules != nil && rules.StabilizationWindowSeconds != nil {
				if w := *rules.StabilizationWindowSeconds; w < 0 || w > 3600 {
					errs = append(errs, field.Invalid(ap.Child("behavior", name, "stabilizationWindowSeconds"), w, "must be between 0 and 3600"))
				}
			}
		}
	}
	for i, m := range a.Metrics {
		mp := ap.Child("metrics").Index(i)
		if m.Type != autoscalingv2.PodsMetricSourceType || m.Pods == nil {
			errs = append(errs, field.NotSupported(mp.Child("type"), m.Type, []string{string(autoscalingv2.PodsMetricSourceType)}))
			continue
		}
		t := m.Pods.Target
		switch t.Type {
		case autoscalingv2.AverageValueMetricType:
			if t.AverageValue == nil || t.AverageValue.Value() < 1 {
				errs = append(errs, field.Invalid(mp.Child("pods", "target", "averageValue"), t.AverageValue, "must be at least 1"))
			}
		case autoscalingv2.ValueMetricType:
			if t.Value == nil || t.Value.Value() < 1 {
				errs = append(errs, field.Invalid(mp.Child("pods", "target", "value"), t.Value, "must be at least 1"))
			}
		default:
			errs = append(errs, field.NotSupported(mp.Child("pods", "target", "type"), t.Type,
				[]string{string(autoscalingv2.AverageValueMetricType), string(autoscalingv2.ValueMetricType)}))
		}
	}
	return errs
}
