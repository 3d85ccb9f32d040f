package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/api/v1beta1"
)

// v1beta1Data holds the v1beta1 fields a v1alpha1 collector cannot express. It travels in the
// AnnotationV1beta1Data annotation of the v1alpha1 form. v1alpha1 clients cannot edit these
// fields, so restoring them on the way back is always right.
//
// +kubebuilder:object:generate=false
type v1beta1Data struct {
	DNSPolicy                            *corev1.DNSPolicy                                       `json:"dnsPolicy,omitempty"`
	HostPID                              bool                                                    `json:"hostPID,omitempty"`
	PodDNSConfig                         *corev1.PodDNSConfig                                    `json:"podDnsConfig,omitempty"`
	IpFamilies                           []corev1.IPFamily                                       `json:"ipFamilies,omitempty"`
	IpFamilyPolicy                       *corev1.IPFamilyPolicy                                  `json:"ipFamilyPolicy,omitempty"`
	SessionAffinity                      *corev1.ServiceAffinity                                 `json:"sessionAffinity,omitempty"`
	SessionAffinityConfig                *corev1.SessionAffinityConfig                           `json:"sessionAffinityConfig,omitempty"`
	HostUsers                            *bool                                                   `json:"hostUsers,omitempty"`
	HostAliases                          []corev1.HostAlias                                      `json:"hostAliases,omitempty"`
	PersistentVolumeClaimRetentionPolicy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
	PodManagementPolicy                  appsv1.PodManagementPolicyType                          `json:"podManagementPolicy,omitempty"`
	ConfigVersions                       int                                                     `json:"configVersions,omitempty"`
	HttpRoute                            *v1beta1.HttpRouteConfig                                `json:"httpRoute,omitempty"`
	NetworkPolicy                        *v1beta1.NetworkPolicy                                  `json:"networkPolicy,omitempty"`
	ReadinessProbe                       *v1beta1.Probe                                          `json:"readinessProbe,omitempty"`
	StartupProbe                         *v1beta1.Probe                                          `json:"startupProbe,omitempty"`
	MetricsExtraLabels                   map[string]string                                       `json:"metricsExtraLabels,omitempty"`
	Command                              []string                                                `json:"command,omitempty"`
	TargetAllocator                      *targetAllocatorData                                    `json:"targetAllocator,omitempty"`
	ObservedGeneration                   int64                                                   `json:"observedGeneration,omitempty"`
	Conditions                           []metav1.Condition                                      `json:"conditions,omitempty"`
}

// targetAllocatorData holds the v1beta1-only fields of the embedded target allocator.
//
// +kubebuilder:object:generate=false
type targetAllocatorData struct {
	AllowInsecureAuthSecrets      bool                         `json:"allowInsecureAuthSecrets,omitempty"`
	CollectorNotReadyGracePeriod  *metav1.Duration             `json:"collectorNotReadyGracePeriod,omitempty"`
	CollectorTargetReloadInterval *metav1.Duration             `json:"collectorTargetReloadInterval,omitempty"`
	Mtls                          *v1beta1.TargetAllocatorMTLS `json:"mtls,omitempty"`
	MetricsExtraLabels            map[string]string            `json:"metricsExtraLabels,omitempty"`
	PrometheusCR                  *prometheusCRData            `json:"prometheusCR,omitempty"`
}

// prometheusCRData holds the v1beta1-only fields of prometheusCR. The pod and service monitor
// selectors are held only when a label map cannot express them.
//
// +kubebuilder:object:generate=false
type prometheusCRData struct {
	AllowNamespaces                 []string              `json:"allowNamespaces,omitempty"`
	DenyNamespaces                  []string              `json:"denyNamespaces,omitempty"`
	SecretNamespaces                []string              `json:"secretNamespaces,omitempty"`
	EvaluationInterval              *metav1.Duration      `json:"evaluationInterval,omitempty"`
	ScrapeProtocols                 []string              `json:"scrapeProtocols,omitempty"`
	PodMonitorSelector              *heldSelector         `json:"podMonitorSelector,omitempty"`
	PodMonitorNamespaceSelector     *metav1.LabelSelector `json:"podMonitorNamespaceSelector,omitempty"`
	ServiceMonitorSelector          *heldSelector         `json:"serviceMonitorSelector,omitempty"`
	ServiceMonitorNamespaceSelector *metav1.LabelSelector `json:"serviceMonitorNamespaceSelector,omitempty"`
	ScrapeConfigSelector            *metav1.LabelSelector `json:"scrapeConfigSelector,omitempty"`
	ScrapeConfigNamespaceSelector   *metav1.LabelSelector `json:"scrapeConfigNamespaceSelector,omitempty"`
	ProbeSelector                   *metav1.LabelSelector `json:"probeSelector,omitempty"`
	ProbeNamespaceSelector          *metav1.LabelSelector `json:"probeNamespaceSelector,omitempty"`
}

// hubDataOf collects the fields of hub that its v1alpha1 form cannot express.
func hubDataOf(hub *v1beta1.OpenTelemetryCollector) v1beta1Data {
	s := &hub.Spec
	d := v1beta1Data{
		DNSPolicy:                            s.DNSPolicy,
		HostPID:                              s.HostPID,
		IpFamilies:                           s.IpFamilies,
		IpFamilyPolicy:                       s.IpFamilyPolicy,
		SessionAffinity:                      s.SessionAffinity,
		SessionAffinityConfig:                s.SessionAffinityConfig,
		HostUsers:                            s.HostUsers,
		HostAliases:                          s.HostAliases,
		PersistentVolumeClaimRetentionPolicy: s.PersistentVolumeClaimRetentionPolicy,
		PodManagementPolicy:                  s.PodManagementPolicy,
		ConfigVersions:                       s.ConfigVersions,
		ReadinessProbe:                       s.ReadinessProbe,
		StartupProbe:                         s.StartupProbe,
		MetricsExtraLabels:                   s.Observability.Metrics.ExtraLabels,
		Command:                              s.Command,
		ObservedGeneration:                   hub.Status.ObservedGeneration,
		Conditions:                           hub.Status.Conditions,
	}
	if !semanticEqual(s.PodDNSConfig, corev1.PodDNSConfig{}) {
		d.PodDNSConfig = &s.PodDNSConfig
	}
	if !semanticEqual(s.HttpRoute, v1beta1.HttpRouteConfig{}) {
		d.HttpRoute = &s.HttpRoute
	}
	if s.NetworkPolicy.Enabled != nil {
		d.NetworkPolicy = &s.NetworkPolicy
	}
	ta := targetAllocatorData{
		AllowInsecureAuthSecrets:      s.TargetAllocator.AllowInsecureAuthSecrets,
		CollectorNotReadyGracePeriod:  s.TargetAllocator.CollectorNotReadyGracePeriod,
		CollectorTargetReloadInterval: s.TargetAllocator.CollectorTargetReloadInterval,
		Mtls:                          s.TargetAllocator.Mtls,
		MetricsExtraLabels:            s.TargetAllocator.Observability.Metrics.ExtraLabels,
	}
	p := &s.TargetAllocator.PrometheusCR
	pd := prometheusCRData{
		AllowNamespaces:                 p.AllowNamespaces,
		DenyNamespaces:                  p.DenyNamespaces,
		SecretNamespaces:                p.SecretNamespaces,
		EvaluationInterval:              p.EvaluationInterval,
		ScrapeProtocols:                 p.ScrapeProtocols,
		PodMonitorNamespaceSelector:     p.PodMonitorNamespaceSelector,
		ServiceMonitorNamespaceSelector: p.ServiceMonitorNamespaceSelector,
		ScrapeConfigSelector:            p.ScrapeConfigSelector,
		ScrapeConfigNamespaceSelector:   p.ScrapeConfigNamespaceSelector,
		ProbeSelector:                   p.ProbeSelector,
		ProbeNamespaceSelector:          p.ProbeNamespaceSelector,
	}
	if !selectorExpressible(p.PodMonitorSelector) {
		pd.PodMonitorSelector = &heldSelector{Selector: p.PodMonitorSelector}
	}
	if !selectorExpressible(p.ServiceMonitorSelector) {
		pd.ServiceMonitorSelector = &heldSelector{Selector: p.ServiceMonitorSelector}
	}
	if !semanticEqual(pd, prometheusCRData{}) {
		ta.PrometheusCR = &pd
	}
	if !semanticEqual(ta, targetAllocatorData{}) {
		d.TargetAllocator = &ta
	}
	return d
}

func (d *v1beta1Data) isZero() bool {
	return semanticEqual(*d, v1beta1Data{})
}

// restore writes the held fields into hub, which was just converted from v1alpha1.
func (d *v1beta1Data) restore(hub *v1beta1.OpenTelemetryCollector, from *OpenTelemetryCollector) {
	s := &hub.Spec
	s.DNSPolicy = d.DNSPolicy
	s.HostPID = d.HostPID
	if d.PodDNSConfig != nil {
		s.PodDNSConfig = *d.PodDNSConfig
	}
	s.IpFamilies = d.IpFamilies
	s.IpFamilyPolicy = d.IpFamilyPolicy
	s.SessionAffinity = d.SessionAffinity
	s.SessionAffinityConfig = d.SessionAffinityConfig
	s.HostUsers = d.HostUsers
	s.HostAliases = d.HostAliases
	s.PersistentVolumeClaimRetentionPolicy = d.PersistentVolumeClaimRetentionPolicy
	s.PodManagementPolicy = d.PodManagementPolicy
	s.ConfigVersions = d.ConfigVersions
	if d.HttpRoute != nil {
		s.HttpRoute = *d.HttpRoute
	}
	if d.NetworkPolicy != nil {
		s.NetworkPolicy = *d.NetworkPolicy
	}
	s.ReadinessProbe = d.ReadinessProbe
	s.StartupProbe = d.StartupProbe
	s.Observability.Metrics.ExtraLabels = d.MetricsExtraLabels
	s.Command = d.Command
	hub.Status.ObservedGeneration = d.ObservedGeneration
	hub.Status.Conditions = d.Conditions

	ta := d.TargetAllocator
	if ta == nil {
		return
	}
	s.TargetAllocator.AllowInsecureAuthSecrets = ta.AllowInsecureAuthSecrets
	s.TargetAllocator.CollectorNotReadyGracePeriod = ta.CollectorNotReadyGracePeriod
	s.TargetAllocator.CollectorTargetReloadInterval = ta.CollectorTargetReloadInterval
	s.TargetAllocator.Mtls = ta.Mtls
	s.TargetAllocator.Observability.Metrics.ExtraLabels = ta.MetricsExtraLabels
	pd := ta.PrometheusCR
	if pd == nil {
		return
	}
	p := &s.TargetAllocator.PrometheusCR
	p.AllowNamespaces = pd.AllowNamespaces
	p.DenyNamespaces = pd.DenyNamespaces
	p.SecretNamespaces = pd.SecretNamespaces
	p.EvaluationInterval = pd.EvaluationInterval
	p.ScrapeProtocols = pd.ScrapeProtocols
	p.PodMonitorNamespaceSelector = pd.PodMonitorNamespaceSelector
	p.ServiceMonitorNamespaceSelector = pd.ServiceMonitorNamespaceSelector
	p.ScrapeConfigSelector = pd.ScrapeConfigSelector
	p.ScrapeConfigNamespaceSelector = pd.ScrapeConfigNamespaceSelector
	p.ProbeSelector = pd.ProbeSelector
	p.ProbeNamespaceSelector = pd.ProbeNamespaceSelector
	// A held selector is restored only while the v1alpha1 label map still shows what it showed
	// when the selector was held; otherwise the v1alpha1 client changed it and its map wins.
	fromCR := &from.Spec.TargetAllocator.PrometheusCR
	if pd.PodMonitorSelector != nil && semanticEqual(fromCR.PodMonitorSelector, matchLabels(pd.PodMonitorSelector.Selector)) {
		p.PodMonitorSelector = pd.PodMonitorSelector.Selector
	}
	if pd.ServiceMonitorSelector != nil && semanticEqual(fromCR.ServiceMonitorSelector, matchLabels(pd.ServiceMonitorSelector.Selector)) {
		p.ServiceMonitorSelector = pd.ServiceMonitorSelector.Selector
	}
}

// v1alpha1Data holds the deprecated v1alpha1 fields that v1beta1 does not have. It travels in
// the AnnotationV1alpha1Data annotation of the v1beta1 form.
//
// +kubebuilder:object:generate=false
type v1alpha1Data struct {
	MinReplicas *int32          `json:"minReplicas,omitempty"`
	MaxReplicas *int32          `json:"maxReplicas,omitempty"`
	Autoscaler  *AutoscalerSpec `json:"autoscaler,omitempty"`
	Messages    []string        `json:"messages,omitempty"`
	Replicas    int32           `json:"replicas,omitempty"`
}

// alphaDataOf collects the deprecated fields of a v1alpha1 collector. The autoscaler is held
// with spec.minReplicas/maxReplicas because the conversion folds them into it.
func alphaDataOf(in *OpenTelemetryCollector) v1alpha1Data {
	d := v1alpha1Data{Messages: in.Status.Messages, Replicas: in.Status.Replicas}
	if in.Spec.MinReplicas != nil || in.Spec.MaxReplicas != nil {
		d.MinReplicas = in.Spec.MinReplicas
		d.MaxReplicas = in.Spec.MaxReplicas
		d.Autoscaler = in.Spec.Autoscaler
	}
	return d
}

func (d *v1alpha1Data) isZero() bool {
	return semanticEqual(*d, v1alpha1Data{})
}

// restore writes the held fields into out, converted from hub. The deprecated replica bounds
// come back only while hub's autoscaler is still the one they produced; a v1beta1 client that
// changed the autoscaler since wins.
func (d *v1alpha1Data) restore(out *OpenTelemetryCollector, hub *v1beta1.OpenTelemetryCollector) {
	out.Status.Messages = d.Messages
	out.Status.Replicas = d.Replicas
	if d.MinReplicas == nil && d.MaxReplicas == nil {
		return
	}
	if semanticEqual(autoscalerToHub(d.Autoscaler, d.MinReplicas, d.MaxReplicas), hub.Spec.Autoscaler) {
		out.Spec.Autoscaler = d.Autoscaler
		out.Spec.MinReplicas = d.MinReplicas
		out.Spec.MaxReplicas = d.MaxReplicas
	}
}
