package collector

import (
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
)

// DefaultCPUTarget is the average CPU utilization (percent) an autoscaler targets when neither a
// CPU nor a memory target is given.
const DefaultCPUTarget int32 = 90

// DefaultOptions tune ApplyDefaults.
type DefaultOptions struct {
	// EnableNetworkPolicy sets spec.networkPolicy.enabled to true when it is unset, as upstream
	// does with its feature gate operand.networkpolicy.
	EnableNetworkPolicy bool
	// Config tunes the defaults written into spec.config.
	Config collectorconfig.DefaultOptions
}

// ApplyDefaults fills in upstream's defaults on otelcol in place. It is deterministic and idempotent:
// applying it to its own result changes nothing. It only fails when spec.config cannot be
// re-encoded, which a decoded object never causes.
func ApplyDefaults(otelcol *v1beta1.OpenTelemetryCollector, opts DefaultOptions) error {
	spec := &otelcol.Spec
	if spec.Mode == "" {
		spec.Mode = v1beta1.ModeDeployment
	}
	if spec.UpgradeStrategy == "" {
		spec.UpgradeStrategy = v1beta1.UpgradeStrategyAutomatic
	}
	// Deployments and HPAs default to one replica too, so the Collector's status agrees with them.
	if spec.Replicas == nil {
		spec.Replicas = ptr.To[int32](1)
	}
	if spec.TargetAllocator.Enabled && spec.TargetAllocator.Replicas == nil {
		spec.TargetAllocator.Replicas = ptr.To[int32](1)
	}
	if as := spec.Autoscaler; as != nil && as.MaxReplicas != nil {
		if as.MinReplicas == nil {
			as.MinReplicas = ptr.To(*spec.Replicas)
		}
		if as.TargetCPUUtilization == nil && as.TargetMemoryUtilization == nil {
			as.TargetCPUUtilization = ptr.To(DefaultCPUTarget)
		}
	}
	if spec.Ingress.Type == v1beta1.IngressTypeRoute && spec.Ingress.Route.Termination == "" {
		spec.Ingress.Route.Termination = v1beta1.TLSRouteTerminationTypeEdge
	}
	if spec.Ingress.Type == v1beta1.IngressTypeIngress && spec.Ingress.RuleType == "" {
		spec.Ingress.RuleType = v1beta1.IngressRuleTypePath
	}
	// Objects stored before the field existed must not become unmanaged by accident.
	if spec.ManagementState == "" {
		spec.ManagementState = v1beta1.ManagementStateManaged
	}
	if opts.EnableNetworkPolicy && spec.NetworkPolicy.Enabled == nil {
		spec.NetworkPolicy.Enabled = ptr.To(true)
	}
	raw, err := configMap(&spec.Config)
	if err != nil {
		return err
	}
	// Persisting the config defaults makes the ConfigMap (and its hash) equal to upstream's.
	return setConfig(&spec.Config, collectorconfig.ApplyDefaults(raw, opts.Config))
}
