package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// specToHub maps the fields both versions have. The input is a private copy: slices and
// pointers are moved, not copied. The deprecated spec.minReplicas/maxReplicas fill the
// autoscaler's bounds when the autoscaler leaves them unset, as upstream does.
func specToHub(s *OpenTelemetryCollectorSpec) v1beta1.OpenTelemetryCollectorSpec {
	return v1beta1.OpenTelemetryCollectorSpec{
		OpenTelemetryCommonFields: v1beta1.OpenTelemetryCommonFields{
			ManagementState:               v1beta1.ManagementStateType(s.ManagementState),
			Resources:                     s.Resources,
			NodeSelector:                  s.NodeSelector,
			Args:                          s.Args,
			Replicas:                      s.Replicas,
			PodDisruptionBudget:           pdbToHub(s.PodDisruptionBudget),
			SecurityContext:               s.SecurityContext,
			PodSecurityContext:            s.PodSecurityContext,
			PodAnnotations:                s.PodAnnotations,
			ServiceAccount:                s.ServiceAccount,
			Image:                         s.Image,
			ImagePullPolicy:               s.ImagePullPolicy,
			VolumeMounts:                  s.VolumeMounts,
			Ports:                         portsToHub(s.Ports),
			Env:                           s.Env,
			EnvFrom:                       s.EnvFrom,
			Tolerations:                   s.Tolerations,
			Volumes:                       s.Volumes,
			Affinity:                      s.Affinity,
			Lifecycle:                     s.Lifecycle,
			TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
			TopologySpreadConstraints:     s.TopologySpreadConstraints,
			HostNetwork:                   s.HostNetwork,
			ShareProcessNamespace:         s.ShareProcessNamespace,
			PriorityClassName:             s.PriorityClassName,
			InitContainers:                s.InitContainers,
			AdditionalContainers:          s.AdditionalContainers,
			TrafficDistribution:           s.TrafficDistribution,
		},
		StatefulSetCommonFields: v1beta1.StatefulSetCommonFields{
			VolumeClaimTemplates: s.VolumeClaimTemplates,
			ServiceName:          s.ServiceName,
		},
		Autoscaler:      autoscalerToHub(s.Autoscaler, s.MinReplicas, s.MaxReplicas),
		TargetAllocator: taToHub(&s.TargetAllocator),
		Mode:            v1beta1.Mode(s.Mode),
		UpgradeStrategy: v1beta1.UpgradeStrategy(s.UpgradeStrategy),
		Ingress: v1beta1.Ingress{
			Type:             v1beta1.IngressType(s.Ingress.Type),
			RuleType:         v1beta1.IngressRuleType(s.Ingress.RuleType),
			Hostname:         s.Ingress.Hostname,
			Annotations:      s.Ingress.Annotations,
			TLS:              s.Ingress.TLS,
			IngressClassName: s.Ingress.IngressClassName,
			Route:            v1beta1.OpenShiftRoute{Termination: v1beta1.TLSRouteTerminationType(s.Ingress.Route.Termination)},
		},
		LivenessProbe:            probeToHub(s.LivenessProbe),
		Observability:            observabilityToHub(s.Observability),
		ConfigMaps:               configMapsToHub(s.ConfigMaps),
		DaemonSetUpdateStrategy:  s.UpdateStrategy,
		DeploymentUpdateStrategy: s.DeploymentUpdateStrategy,
	}
}

// specFromHub maps the fields both versions have; see hubDataOf for the rest.
func specFromHub(s *v1beta1.OpenTelemetryCollectorSpec) OpenTelemetryCollectorSpec {
	return OpenTelemetryCollectorSpec{
		ManagementState:      ManagementStateType(s.ManagementState),
		Resources:            s.Resources,
		NodeSelector:         s.NodeSelector,
		Args:                 s.Args,
		Replicas:             s.Replicas,
		Autoscaler:           autoscalerFromHub(s.Autoscaler),
		PodDisruptionBudget:  pdbFromHub(s.PodDisruptionBudget),
		SecurityContext:      s.SecurityContext,
		PodSecurityContext:   s.PodSecurityContext,
		PodAnnotations:       s.PodAnnotations,
		TargetAllocator:      taFromHub(&s.TargetAllocator),
		Mode:                 Mode(s.Mode),
		ServiceAccount:       s.ServiceAccount,
		Image:                s.Image,
		UpgradeStrategy:      UpgradeStrategy(s.UpgradeStrategy),
		ImagePullPolicy:      s.ImagePullPolicy,
		VolumeMounts:         s.VolumeMounts,
		Ports:                portsFromHub(s.Ports),
		Env:                  s.Env,
		EnvFrom:              s.EnvFrom,
		VolumeClaimTemplates: s.VolumeClaimTemplates,
		Tolerations:          s.Tolerations,
		Volumes:              s.Volumes,
		Ingress: Ingress{
			Type:             IngressType(s.Ingress.Type),
			RuleType:         IngressRuleType(s.Ingress.RuleType),
			Hostname:         s.Ingress.Hostname,
			Annotations:      s.Ingress.Annotations,
			TLS:              s.Ingress.TLS,
			IngressClassName: s.Ingress.IngressClassName,
			Route:            OpenShiftRoute{Termination: TLSRouteTerminationType(s.Ingress.Route.Termination)},
		},
		HostNetwork:                   s.HostNetwork,
		ShareProcessNamespace:         s.ShareProcessNamespace,
		PriorityClassName:             s.PriorityClassName,
		Affinity:                      s.Affinity,
		Lifecycle:                     s.Lifecycle,
		TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
		LivenessProbe:                 probeFromHub(s.LivenessProbe),
		InitContainers:                s.InitContainers,
		ServiceName:                   s.ServiceName,
		TrafficDistribution:           s.TrafficDistribution,
		AdditionalContainers:          s.AdditionalContainers,
		Observability: ObservabilitySpec{Metrics: MetricsConfigSpec{
			EnableMetrics:                s.Observability.Metrics.EnableMetrics,
			DisablePrometheusAnnotations: s.Observability.Metrics.DisablePrometheusAnnotations,
		}},
		TopologySpreadConstraints: s.TopologySpreadConstraints,
		ConfigMaps:                configMapsFromHub(s.ConfigMaps),
		UpdateStrategy:            s.DaemonSetUpdateStrategy,
		DeploymentUpdateStrategy:  s.DeploymentUpdateStrategy,
	}
}

func statusToHub(s *OpenTelemetryCollectorStatus) v1beta1.OpenTelemetryCollectorStatus {
	return v1beta1.OpenTelemetryCollectorStatus{
		Scale: v1beta1.ScaleSubresourceStatus{
			Selector:       s.Scale.Selector,
			Replicas:       s.Scale.Replicas,
			StatusReplicas: s.Scale.StatusReplicas,
		},
		Version: s.Version,
		Image:   s.Image,
	}
}

func statusFromHub(s *v1beta1.OpenTelemetryCollectorStatus) OpenTelemetryCollectorStatus {
	return OpenTelemetryCollectorStatus{
		Scale: ScaleSubresourceStatus{
			Selector:       s.Scale.Selector,
			Replicas:       s.Scale.Replicas,
			StatusReplicas: s.Scale.StatusReplicas,
		},
		Version: s.Version,
		Image:   s.Image,
	}
}

func autoscalerToHub(in *AutoscalerSpec, minReplicas, maxReplicas *int32) *v1beta1.AutoscalerSpec {
	if in == nil && minReplicas == nil && maxReplicas == nil {
		return nil
	}
	out := &v1beta1.AutoscalerSpec{}
	if in != nil {
		out.MinReplicas = in.MinReplicas
		out.MaxReplicas = in.MaxReplicas
		out.Behavior = in.Behavior
		out.TargetCPUUtilization = in.TargetCPUUtilization
		out.TargetMemoryUtilization = in.TargetMemoryUtilization
		if in.Metrics != nil {
			out.Metrics = make([]v1beta1.MetricSpec, len(in.Metrics))
			for i, m := range in.Metrics {
				out.Metrics[i] = v1beta1.MetricSpec{Type: m.Type, Pods: m.Pods}
			}
		}
	}
	if out.MinReplicas == nil {
		out.MinReplicas = minReplicas
	}
	if out.MaxReplicas == nil {
		out.MaxReplicas = maxReplicas
	}
	return out
}

func autoscalerFromHub(in *v1beta1.AutoscalerSpec) *AutoscalerSpec {
	if in == nil {
		return nil
	}
	out := &AutoscalerSpec{
		MinReplicas:             in.MinReplicas,
		MaxReplicas:             in.MaxReplicas,
		Behavior:                in.Behavior,
		TargetCPUUtilization:    in.TargetCPUUtilization,
		TargetMemoryUtilization: in.TargetMemoryUtilization,
	}
	if in.Metrics != nil {
		out.Metrics = make([]MetricSpec, len(in.Metrics))
		for i, m := range in.Metrics {
			out.Metrics[i] = MetricSpec{Type: m.Type, Pods: m.Pods}
		}
	}
	return out
}

func pdbToHub(in *PodDisruptionBudgetSpec) *v1beta1.PodDisruptionBudgetSpec {
	if in == nil {
		return nil
	}
	return &v1beta1.PodDisruptionBudgetSpec{MinAvailable: in.MinAvailable, MaxUnavailable: in.MaxUnavailable}
}

func pdbFromHub(in *v1beta1.PodDisruptionBudgetSpec) *PodDisruptionBudgetSpec {
	if in == nil {
		return nil
	}
	return &PodDisruptionBudgetSpec{MinAvailable: in.MinAvailable, MaxUnavailable: in.MaxUnavailable}
}

func portsToHub(in []PortsSpec) []v1beta1.PortsSpec {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.PortsSpec, len(in))
	for i, p := range in {
		out[i] = v1beta1.PortsSpec{HostPort: p.HostPort, ServicePort: p.ServicePort}
	}
	return out
}

func portsFromHub(in []v1beta1.PortsSpec) []PortsSpec {
	if in == nil {
		return nil
	}
	out := make([]PortsSpec, len(in))
	for i, p := range in {
		out[i] = PortsSpec{HostPort: p.HostPort, ServicePort: p.ServicePort}
	}
	return out
}

func probeToHub(in *Probe) *v1beta1.Probe {
	if in == nil {
		return nil
	}
	return &v1beta1.Probe{
		InitialDelaySeconds:           in.InitialDelaySeconds,
		TimeoutSeconds:                in.TimeoutSeconds,
		PeriodSeconds:                 in.PeriodSeconds,
		SuccessThreshold:              in.SuccessThreshold,
		FailureThreshold:              in.FailureThreshold,
		TerminationGracePeriodSeconds: in.TerminationGracePeriodSeconds,
	}
}

func probeFromHub(in *v1beta1.Probe) *Probe {
	if in == nil {
		return nil
	}
	return &Probe{
		InitialDelaySeconds:           in.InitialDelaySeconds,
		TimeoutSeconds:                in.TimeoutSeconds,
		PeriodSeconds:                 in.PeriodSeconds,
		SuccessThreshold:              in.SuccessThreshold,
		FailureThreshold:              in.FailureThreshold,
		TerminationGracePeriodSeconds: in.TerminationGracePeriodSeconds,
	}
}

func observabilityToHub(in ObservabilitySpec) v1beta1.ObservabilitySpec {
	return v1beta1.ObservabilitySpec{Metrics: v1beta1.MetricsConfigSpec{
		EnableMetrics:                in.Metrics.EnableMetrics,
		DisablePrometheusAnnotations: in.Metrics.DisablePrometheusAnnotations,
	}}
}

func observabilityFromHub(in v1beta1.ObservabilitySpec) ObservabilitySpec {
	return ObservabilitySpec{Metrics: MetricsConfigSpec{
		EnableMetrics:                in.Metrics.EnableMetrics,
		DisablePrometheusAnnotations: in.Metrics.DisablePrometheusAnnotations,
	}}
}

func configMapsToHub(in []ConfigMapsSpec) []v1beta1.ConfigMapsSpec {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.ConfigMapsSpec, len(in))
	for i, c := range in {
		out[i] = v1beta1.ConfigMapsSpec{Name: c.Name, MountPath: c.MountPath}
	}
	return out
}

func configMapsFromHub(in []v1beta1.ConfigMapsSpec) []ConfigMapsSpec {
	if in == nil {
		return nil
	}
	out := make([]ConfigMapsSpec, len(in))
	for i, c := range in {
		out[i] = ConfigMapsSpec{Name: c.Name, MountPath: c.MountPath}
	}
	return out
}

// taToHub maps the embedded target allocator. A v1alpha1 selector map becomes a selector with
// those match labels; a missing map becomes the empty selector, which selects everything, as
// the v1alpha1 field documents.
func taToHub(in *OpenTelemetryTargetAllocator) v1beta1.TargetAllocatorEmbedded {
	return v1beta1.TargetAllocatorEmbedded{
		Replicas:           in.Replicas,
		NodeSelector:       in.NodeSelector,
		Resources:          in.Resources,
		AllocationStrategy: v1beta1.TargetAllocatorAllocationStrategy(in.AllocationStrategy),
		FilterStrategy:     v1beta1.TargetAllocatorFilterStrategy(in.FilterStrategy),
		ServiceAccount:     in.ServiceAccount,
		Image:              in.Image,
		Enabled:            in.Enabled,
		Affinity:           in.Affinity,
		PrometheusCR: v1beta1.TargetAllocatorPrometheusCR{
			Enabled:                in.PrometheusCR.Enabled,
			ScrapeInterval:         in.PrometheusCR.ScrapeInterval,
			ScrapeClasses:          in.PrometheusCR.ScrapeClasses,
			PodMonitorSelector:     &metav1.LabelSelector{MatchLabels: in.PrometheusCR.PodMonitorSelector},
			ServiceMonitorSelector: &metav1.LabelSelector{MatchLabels: in.PrometheusCR.ServiceMonitorSelector},
			DenyFSAccessThroughSMs: in.PrometheusCR.DenyFSAccessThroughSMs,
		},
		SecurityContext:           in.SecurityContext,
		PodSecurityContext:        in.PodSecurityContext,
		TopologySpreadConstraints: in.TopologySpreadConstraints,
		Tolerations:               in.Tolerations,
		Env:                       in.Env,
		Observability:             observabilityToHub(in.Observability),
		PodDisruptionBudget:       pdbToHub(in.PodDisruptionBudget),
	}
}

func taFromHub(in *v1beta1.TargetAllocatorEmbedded) OpenTelemetryTargetAllocator {
	return OpenTelemetryTargetAllocator{
		Replicas:           in.Replicas,
		NodeSelector:       in.NodeSelector,
		Resources:          in.Resources,
		AllocationStrategy: OpenTelemetryTargetAllocatorAllocationStrategy(in.AllocationStrategy),
		FilterStrategy:     string(in.FilterStrategy),
		ServiceAccount:     in.ServiceAccount,
		Image:              in.Image,
		Enabled:            in.Enabled,
		Affinity:           in.Affinity,
		PrometheusCR: OpenTelemetryTargetAllocatorPrometheusCR{
			Enabled:                in.PrometheusCR.Enabled,
			ScrapeInterval:         in.PrometheusCR.ScrapeInterval,
			ScrapeClasses:          in.PrometheusCR.ScrapeClasses,
			PodMonitorSelector:     matchLabels(in.PrometheusCR.PodMonitorSelector),
			ServiceMonitorSelector: matchLabels(in.PrometheusCR.ServiceMonitorSelector),
			DenyFSAccessThroughSMs: in.PrometheusCR.DenyFSAccessThroughSMs,
		},
		SecurityContext:           in.SecurityContext,
		PodSecurityContext:        in.PodSecurityContext,
		TopologySpreadConstraints: in.TopologySpreadConstraints,
		Tolerations:               in.Tolerations,
		Env:                       in.Env,
		Observability:             observabilityFromHub(in.Observability),
		PodDisruptionBudget:       pdbFromHub(in.PodDisruptionBudget),
	}
}

func matchLabels(s *metav1.LabelSelector) map[string]string {
	if s == nil {
		return nil
	}
	return s.MatchLabels
}

// selectorExpressible reports whether a v1beta1 selector survives the trip through a v1alpha1
// label map: it must be non-nil and use match labels only.
func selectorExpressible(s *metav1.LabelSelector) bool {
	return s != nil && len(s.MatchExpressions) == 0
}

// heldSelector wraps a selector so that a null selector can be told apart from an absent one.
//
// +kubebuilder:object:generate=false
type heldSelector struct {
	Selector *metav1.LabelSelector `json:"selector"`
}

// semanticEqual compares API values, treating nil and empty slices and maps alike.
func semanticEqual(a, b any) bool {
	return equality.Semantic.DeepEqual(a, b)
}
