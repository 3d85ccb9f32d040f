package collector

import (
	"fmt"
	"sort"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
)

// MaxStabilizationWindowSeconds is the longest autoscaler stabilization window accepted.
const MaxStabilizationWindowSeconds int32 = 3600

// ValidateOptions tune Validate.
type ValidateOptions struct {
	// FIPSDisabledComponents are "<kind>.<type>" entries (e.g. "receiver.otlp",
	// "exporter.awsxray") that may not be used because the platform runs in FIPS mode. Empty
	// means no component is disabled.
	FIPSDisabledComponents []string
}

var (
	specPath   = field.NewPath("spec")
	configPath = specPath.Child("config")
)

// Validate checks otelcol against every rule of upstream's collector webhook and the structural
// config checks of internal/collectorconfig, and returns all problems at once plus warnings.
// old is the stored object on update and nil on create. It makes no API calls; the RBAC check
// that needs the API server is in Webhook.
func Validate(otelcol, old *v1beta1.OpenTelemetryCollector, opts ValidateOptions) (field.ErrorList, []string) {
	spec := &otelcol.Spec
	var errs field.ErrorList
	var warnings []string

	if old != nil && old.Spec.Mode != spec.Mode {
		errs = append(errs, field.Invalid(specPath.Child("mode"), spec.Mode,
			fmt.Sprintf("the mode cannot be changed after creation (it is %q); create a new collector instead", old.Spec.Mode)))
	}

	raw, err := configMap(&spec.Config)
	if err != nil {
		return append(errs, field.InternalError(configPath, err)), warnings
	}
	cfg := collectorconfig.Parse(raw)
	cfgErrs, cfgWarnings := collectorconfig.Validate(cfg, configPath)
	errs = append(errs, cfgErrs...)
	warnings = append(warnings, cfgWarnings...)

	errs = append(errs, validateMode(spec)...)
	if spec.TargetAllocator.Enabled {
		errs = append(errs, validateTargetAllocator(spec, raw)...)
	}
	errs = append(errs, validatePorts(spec.Ports)...)
	errs = append(errs, validateAutoscaler(spec)...)
	errs = append(errs, validateIngress(spec)...)
	errs = append(errs, validateFIPS(cfg, opts.FIPSDisabledComponents)...)
	return errs, warnings
}

// validateMode checks the fields that only some modes support.
func validateMode(spec *v1beta1.OpenTelemetryCollectorSpec) field.ErrorList {
	var errs field.ErrorList
	mode := spec.Mode
	forbidden := func(name string, set bool, allowed string) {
		if set {
			errs = append(errs, field.Forbidden(specPath.Child(name),
				fmt.Sprintf("not supported in mode %q; only in mode %s", mode, allowed)))
		}
	}
	notStatefulSet := mode != v1beta1.ModeStatefulSet
	forbidden("volumeClaimTemplates", notStatefulSet && len(spec.VolumeClaimTemplates) > 0, "statefulset")
	forbidden("persistentVolumeClaimRetentionPolicy", notStatefulSet && spec.PersistentVolumeClaimRetentionPolicy != nil, "statefulset")
	sidecar := mode == v1beta1.ModeSidecar
	const notSidecar = "deployment, daemonset or statefulset"
	forbidden("tolerations", sidecar && len(spec.Tolerations) > 0, notSidecar)
	forbidden("priorityClassName", sidecar && spec.PriorityClassName != "", notSidecar)
	forbidden("affinity", sidecar && spec.Affinity != nil, notSidecar)
	forbidden("additionalContainers", sidecar && len(spec.AdditionalContainers) > 0, notSidecar)
	forbidden("daemonSetUpdateStrategy", mode != v1beta1.ModeDaemonSet && spec.DaemonSetUpdateStrategy.Type != "", "daemonset")
	forbidden("deploymentUpdateStrategy", mode != v1beta1.ModeDeployment && spec.DeploymentUpdateStrategy.Type != "", "deployment")
	return errs
}

// validateTargetAllocator checks an enabled target allocator against the mode and the
// prometheus receiver it takes its scrape configs from.
func validateTargetAllocator(spec *v1beta1.OpenTelemetryCollectorSpec, raw map[string]any) field.ErrorList {
	var errs field.ErrorList
	ta := specPath.Child("targetAllocator")
	perNode := spec.TargetAllocator.AllocationStrategy == v1beta1.TargetAllocatorAllocationStrategyPerNode
	switch {
	case spec.Mode != v1beta1.ModeStatefulSet && spec.Mode != v1beta1.ModeDaemonSet:
		errs = append(errs, field.Forbidden(ta.Child("enabled"),
			fmt.Sprintf("the target allocator is not supported in mode %q; only in mode statefulset or daemonset", spec.Mode)))
	case spec.Mode == v1beta1.ModeDaemonSet && !perNode:
		errs = append(errs, field.Invalid(ta.Child("allocationStrategy"), spec.TargetAllocator.AllocationStrategy,
			"mode daemonset needs allocation strategy per-node"))
	case spec.Mode != v1beta1.ModeDaemonSet && perNode:
		errs = append(errs, field.Invalid(ta.Child("allocationStrategy"), spec.TargetAllocator.AllocationStrategy,
			"allocation strategy per-node is only supported in mode daemonset"))
	}
	receivers, _ := raw["receivers"].(map[string]any)
	if _, ok := receivers["prometheus"]; !ok {
		return append(errs, field.Required(configPath.Child("receivers", "prometheus"),
			"the target allocator needs a prometheus receiver"))
	}
	scrapeConfigs, err := collectorconfig.PrometheusScrapeConfigs(raw, configPath)
	if err != nil {
		return append(errs, asFieldError(err, configPath.Child("receivers", "prometheus")))
	}
	if len(scrapeConfigs) == 0 && !spec.TargetAllocator.PrometheusCR.Enabled {
		errs = append(errs, field.Required(configPath.Child("receivers", "prometheus", "config", "scrape_configs"),
			"define at least one scrape config or enable spec.targetAllocator.prometheusCR"))
	}
	return errs
}

// asFieldError keeps a *field.Error as it is and wraps anything else at p.
func asFieldError(err error, p *field.Path) *field.Error {
	if fe, ok := err.(*field.Error); ok {
		return fe
	}
	return field.Invalid(p, nil, err.Error())
}

// validatePorts checks the user's spec.ports.
func validatePorts(ports []v1beta1.PortsSpec) field.ErrorList {
	var errs field.ErrorList
	for i, p := range ports {
		pp := specPath.Child("ports").Index(i)
		for _, msg := range validation.IsValidPortName(p.Name) {
			errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
		}
	}
	return errs
}

// validateAutoscaler checks the replica bounds, the behavior windows and the metrics.
func validateAutoscaler(spec *v1beta1.OpenTelemetryCollectorSpec) field.ErrorList {
	as := spec.Autoscaler
	if as == nil {
		return nil
	}
	var errs field.ErrorList
	ap := specPath.Child("autoscaler")
	if as.MaxReplicas == nil {
		if as.MinReplicas != nil {
			errs = append(errs, field.Required(ap.Child("maxReplicas"), "must be set when minReplicas is set"))
		}
		return errs
	}
	maxReplicas := *as.MaxReplicas
	if spec.Replicas != nil && *spec.Replicas > maxReplicas {
		errs = append(errs, field.Invalid(specPath.Child("replicas"), *spec.Replicas,
			fmt.Sprintf("must not be greater than autoscaler.maxReplicas (%d)", maxReplicas)))
	}
	if as.MinReplicas != nil && *as.MinReplicas > maxReplicas {
		errs = append(errs, field.Invalid(ap.Child("minReplicas"), *as.MinReplicas,
			fmt.Sprintf("must not be greater than maxReplicas (%d)", maxReplicas)))
	}
	if b := as.Behavior; b != nil {
		errs = append(errs, checkWindow(b.ScaleDown, ap.Child("behavior", "scaleDown", "stabilizationWindowSeconds"))...)
		errs = append(errs, checkWindow(b.ScaleUp, ap.Child("behavior", "scaleUp", "stabilizationWindowSeconds"))...)
	}
	for i, m := range as.Metrics {
		mp := ap.Child("metrics").Index(i)
		if m.Type != autoscalingv2.PodsMetricSourceType || m.Pods == nil {
			errs = append(errs, field.NotSupported(mp.Child("type"), m.Type, []string{string(autoscalingv2.PodsMetricSourceType)}))
			continue
		}
		tp := mp.Child("pods", "target")
		target := m.Pods.Target
		switch target.Type {
		case autoscalingv2.AverageValueMetricType:
			if v, ok := quantityInt(target.AverageValue); !ok || v < 1 {
				errs = append(errs, field.Invalid(tp.Child("averageValue"), target.AverageValue, "must be a whole number of at least 1"))
			}
		case autoscalingv2.ValueMetricType:
			if v, ok := quantityInt(target.Value); !ok || v < 1 {
				errs = append(errs, field.Invalid(tp.Child("value"), target.Value, "must be a whole number of at least 1"))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("type"), target.Type,
				[]string{string(autoscalingv2.AverageValueMetricType), string(autoscalingv2.ValueMetricType)}))
		}
	}
	return errs
}

func checkWindow(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil || r.StabilizationWindowSeconds == nil {
		return nil
	}
	if w := *r.StabilizationWindowSeconds; w < 0 || w > MaxStabilizationWindowSeconds {
		return field.ErrorList{field.Invalid(p, w, fmt.Sprintf("must be between 0 and %d", MaxStabilizationWindowSeconds))}
	}
	return nil
}

// validateIngress checks the ingress against the mode and the subdomain rule's hostname.
func validateIngress(spec *v1beta1.OpenTelemetryCollectorSpec) field.ErrorList {
	var errs field.ErrorList
	ip := specPath.Child("ingress")
	if spec.Ingress.Type == v1beta1.IngressTypeIngress && spec.Mode == v1beta1.ModeSidecar {
		errs = append(errs, field.Forbidden(ip.Child("type"),
			"an ingress is only supported in mode deployment, daemonset or statefulset"))
	}
	if spec.Ingress.RuleType == v1beta1.IngressRuleTypeSubdomain && (spec.Ingress.Hostname == "" || spec.Ingress.Hostname == "*") {
		errs = append(errs, field.Required(ip.Child("hostname"), "ruleType subdomain needs a hostname other than \"*\""))
	}
	return errs
}

// validateFIPS rejects used components that are disabled in FIPS mode.
func validateFIPS(cfg *collectorconfig.Config, disabled []string) field.ErrorList {
	if len(disabled) == 0 {
		return nil
	}
	off := map[string]bool{}
	for _, d := range disabled {
		off[strings.TrimSpace(d)] = true
	}
	var errs field.ErrorList
	for _, kind := range collectorconfig.Kinds {
		var ids []string
		for _, comp := range cfg.UsedComponents(kind) {
			if off[kind.String()+"."+comp.Type] {
				ids = append(ids, comp.ID)
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			errs = append(errs, field.Forbidden(configPath.Child(kind.Section(), id),
				fmt.Sprintf("%s %q is not FIPS compliant and is disabled on this platform; remove it from the config", kind, id)))
		}
	}
	return errs
}
