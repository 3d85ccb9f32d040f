package collector

import (
	"fmt"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
)

// ApplyDefaults applies upstream's defaulting webhook to otelcol in place: mode deployment, upgrade
// strategy automatic, replicas 1 (and target allocator replicas 1 when enabled), autoscaler
// minReplicas and 90% CPU target, route termination edge, ingress rule type path, management state
// managed, networkPolicy.enabled true with the OperandNetworkPolicy gate, and the config defaults of
// collectorconfig.ApplyDefaults. The ConfigMap name depends on the result, so it must match the
// webhook byte for byte; ApplyDefaults is idempotent.
func ApplyDefaults(otelcol *v1beta1.OpenTelemetryCollector, opts Options) error {
	spec := &otelcol.Spec
	if spec.Mode == "" {
		spec.Mode = v1beta1.ModeDeployment
	}
	if spec.UpgradeStrategy == "" {
		spec.UpgradeStrategy = v1beta1.UpgradeStrategyAutomatic
	}
	if otelcol.Labels == nil {
		otelcol.Labels = map[string]string{}
	}
	if spec.Replicas == nil {
		one := int32(1)
		spec.Replicas = &one
	}
	if spec.TargetAllocator.Enabled && spec.TargetAllocator.Replicas == nil {
		one := int32(1)
		spec.TargetAllocator.Replicas = &one
	}
	if a := spec.Autoscaler; a != nil && a.MaxReplicas != nil {
		if a.MinReplicas == nil {
			r := *spec.Replicas
			a.MinReplicas = &r
		}
		if a.TargetMemoryUtilization == nil && a.TargetCPUUtilization == nil {
			cpu := int32(90)
			a.TargetCPUUtilization = &cpu
		}
	}
	if spec.Ingress.Type == v1beta1.IngressTypeRoute && spec.Ingress.Route.Termination == "" {
		spec.Ingress.Route.Termination = v1beta1.TLSRouteTerminationTypeEdge
	}
	if spec.Ingress.Type == v1beta1.IngressTypeIngress && spec.Ingress.RuleType == "" {
		spec.Ingress.RuleType = v1beta1.IngressRuleTypePath
	}
	if spec.ManagementState == "" {
		spec.ManagementState = v1beta1.ManagementStateManaged
	}
	if opts.OperandNetworkPolicy && spec.NetworkPolicy.Enabled == nil {
		t := true
		spec.NetworkPolicy.Enabled = &t
	}
	raw := collectorconfig.ApplyDefaults(RawConfig(spec.Config),
		collectorconfig.DefaultOptions{LegacyTelemetryShape: opts.LegacyTelemetryShape})
	cfg, err := ConfigFromRaw(raw)
	if err != nil {
		return fmt.Errorf("spec.config: %w", err)
	}
	spec.Config = cfg
	return nil
}
