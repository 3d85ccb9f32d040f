package v1alpha1

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1beta1"
)

const simpleConfig = `receivers:
  otlp:
    protocols:
      grpc: {}
      http:
        endpoint: 0.0.0.0:4318
processors:
  batch: {}
exporters:
  debug:
    verbosity: detailed
service:
  telemetry:
    metrics:
      level: basic
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
`

func alphaFull() *OpenTelemetryCollector {
	return &OpenTelemetryCollector{
		TypeMeta: metav1.TypeMeta{APIVersion: "opentelemetry.io/v1alpha1", Kind: "OpenTelemetryCollector"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "full", Namespace: "ns", Labels: map[string]string{"a": "b"},
			Annotations: map[string]string{"keep": "me"},
		},
		Spec: OpenTelemetryCollectorSpec{
			ManagementState: ManagementStateManaged,
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("256Mi"),
			}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Args:         map[string]string{"feature-gates": "-component.UseLocalHostAsDefaultHost"},
			Replicas:     ptr.To[int32](2),
			MinReplicas:  ptr.To[int32](1),
			MaxReplicas:  ptr.To[int32](5),
			Autoscaler: &AutoscalerSpec{
				TargetCPUUtilization: ptr.To[int32](70),
				Metrics: []MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))},
				}}},
			},
			PodDisruptionBudget: &PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			SecurityContext:     &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)},
			PodSecurityContext:  &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1000)},
			PodAnnotations:      map[string]string{"x": "y"},
			TargetAllocator: OpenTelemetryTargetAllocator{
				Enabled:            true,
				Replicas:           ptr.To[int32](1),
				AllocationStrategy: OpenTelemetryTargetAllocatorAllocationStrategyConsistentHashing,
				FilterStrategy:     "relabel-config",
				Image:              "ghcr.io/open-telemetry/opentelemetry-operator/target-allocator:0.157.0",
				PrometheusCR: OpenTelemetryTargetAllocatorPrometheusCR{
					Enabled:                true,
					ScrapeInterval:         &metav1.Duration{Duration: 30 * time.Second},
					PodMonitorSelector:     map[string]string{"team": "a"},
					ServiceMonitorSelector: nil,
					ScrapeClasses:          []v1beta1.AnyConfig{{Object: map[string]any{"name": "default", "default": true}}},
				},
				Observability: ObservabilitySpec{Metrics: MetricsConfigSpec{EnableMetrics: true}},
			},
			Mode:            ModeStatefulSet,
			ServiceAccount:  "sa",
			Image:           "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib:0.157.0",
			UpgradeStrategy: UpgradeStrategyNone,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Config:          simpleConfig,
			VolumeMounts:    []corev1.VolumeMount{{Name: "v", MountPath: "/v"}},
			Ports: []PortsSpec{{HostPort: 9000, ServicePort: corev1.ServicePort{
				Name: "custom", Port: 9000, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9000),
			}}},
			Env:                  []corev1.EnvVar{{Name: "A", Value: "1"}},
			EnvFrom:              []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
			Tolerations:          []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			Volumes:              []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Ingress: Ingress{
				Type: IngressTypeIngress, RuleType: IngressRuleTypePath, Hostname: "otel.example.com",
				Annotations: map[string]string{"i": "j"}, IngressClassName: ptr.To("nginx"),
				TLS:   []networkingv1.IngressTLS{{Hosts: []string{"otel.example.com"}, SecretName: "tls"}},
				Route: OpenShiftRoute{Termination: TLSRouteTerminationTypeEdge},
			},
			HostNetwork:                   true,
			ShareProcessNamespace:         true,
			PriorityClassName:             "high",
			Affinity:                      &corev1.Affinity{},
			Lifecycle:                     &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			LivenessProbe:                 &Probe{InitialDelaySeconds: ptr.To[int32](5), PeriodSeconds: ptr.To[int32](10)},
			InitContainers:                []corev1.Container{{Name: "init", Image: "busybox"}},
			ServiceName:                   "custom-headless",
			TrafficDistribution:           ptr.To("PreferClose"),
			AdditionalContainers:          []corev1.Container{{Name: "side", Image: "busybox"}},
			Observability:                 ObservabilitySpec{Metrics: MetricsConfigSpec{EnableMetrics: true, DisablePrometheusAnnotations: true}},
			TopologySpreadConstraints:     []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}},
			ConfigMaps:                    []ConfigMapsSpec{{Name: "extra", MountPath: "/extra"}},
			UpdateStrategy:                appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			DeploymentUpdateStrategy:      appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
		},
		Status: OpenTelemetryCollectorStatus{
			Scale:    ScaleSubresourceStatus{Selector: "app=x", Replicas: 2, StatusReplicas: "2/2"},
			Version:  "0.157.0",
			Image:    "img",
			Messages: []string{"old"},
			Replicas: 2,
		},
	}
}

func hubFull() *v1beta1.OpenTelemetryCollector {
	hub, err := ToHub(alphaFull())
	if err != nil {
		panic(err)
	}
	delete(hub.Annotations, AnnotationV1alpha1Data)
	s := &hub.Spec
	s.DNSPolicy = ptr.To(corev1.DNSClusterFirstWithHostNet)
	s.HostPID = true
	s.PodDNSConfig = corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}
	s.IpFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	s.IpFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	s.SessionAffinity = ptr.To(corev1.ServiceAffinityClientIP)
	s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}}
	s.HostUsers = ptr.To(false)
	s.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"a"}}}
	s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	s.PodManagementPolicy = appsv1.ParallelPodManagement
	s.ConfigVersions = 3
	s.HttpRoute = v1beta1.HttpRouteConfig{Enabled: true, Gateway: "gw", Hostnames: []string{"h"}}
	s.NetworkPolicy = v1beta1.NetworkPolicy{Enabled: ptr.To(true)}
	s.ReadinessProbe = &v1beta1.Probe{PeriodSeconds: ptr.To[int32](3)}
	s.StartupProbe = &v1beta1.Probe{FailureThreshold: ptr.To[int32](30)}
	s.Observability.Metrics.ExtraLabels = map[string]string{"l": "v"}
	s.Command = []string{"/otelcol-contrib"}
	s.TargetAllocator.AllowInsecureAuthSecrets = true
	s.TargetAllocator.CollectorNotReadyGracePeriod = &metav1.Duration{Duration: 30 * time.Second}
	s.TargetAllocator.CollectorTargetReloadInterval = &metav1.Duration{Duration: time.Minute}
	s.TargetAllocator.Mtls = &v1beta1.TargetAllocatorMTLS{Enabled: true, UseCertManager: ptr.To(false), TLS: &v1beta1.TargetAllocatorTLS{
		CertificateAuthorityCertificate: &v1beta1.CAReference{ConfigMap: &v1beta1.ConfigMapKeySelector{Name: "ca", Key: "ca.crt"}},
	}}
	s.TargetAllocator.Observability.Metrics.ExtraLabels = map[string]string{"ta": "x"}
	p := &s.TargetAllocator.PrometheusCR
	p.AllowNamespaces = []string{"a"}
	p.SecretNamespaces = []string{"s"}
	p.EvaluationInterval = &metav1.Duration{Duration: 30 * time.Second}
	p.ScrapeProtocols = []string{"PrometheusProto"}
	p.ServiceMonitorSelector = nil
	p.PodMonitorSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists}}}
	p.PodMonitorNamespaceSelector = &metav1.LabelSelector{}
	p.ProbeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"p": "q"}}
	hub.Status.ObservedGeneration = 4
	hub.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonReconciled, LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0).UTC())}}
	return hub
}

func TestAlphaRoundTrip(t *testing.T) {
	tests := map[string]*OpenTelemetryCollector{
		"full":                                   alphaFull(),
		"minimal":                                {ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: OpenTelemetryCollectorSpec{Config: simpleConfig}},
		"empty":                                  {},
		"autoscaler from deprecated fields only": {Spec: OpenTelemetryCollectorSpec{MaxReplicas: ptr.To[int32](3)}},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			orig := in.DeepCopy()
			hub, err := ToHub(in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(in).To(Equal(orig), "ToHub must not change its input")
			back, err := FromHub(hub)
			g.Expect(err).NotTo(HaveOccurred())
			expectSameAlpha(g, back, orig)
		})
	}
}

func TestHubRoundTrip(t *testing.T) {
	minimal := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
	minimal.Spec.Config.Receivers.Object = map[string]any{"otlp": map[string]any{}}
	tests := map[string]*v1beta1.OpenTelemetryCollector{
		"full":    hubFull(),
		"minimal": minimal,
		"empty":   {},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			orig := in.DeepCopy()
			alpha, err := FromHub(in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(in).To(Equal(orig), "FromHub must not change its input")
			back, err := ToHub(alpha)
			g.Expect(err).NotTo(HaveOccurred())
			back.TypeMeta = orig.TypeMeta
			g.Expect(equality.Semantic.DeepEqual(back, orig)).To(BeTrue(), "round trip differs:\n got: %+v\nwant: %+v", back.Spec, orig.Spec)
		})
	}
}

func TestHubOnlyFieldsTravelInAnnotation(t *testing.T) {
	g := NewWithT(t)
	alpha, err := FromHub(hubFull())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(alpha.Annotations).To(HaveKey(AnnotationV1beta1Data))
	g.Expect(alpha.Annotations).To(HaveKeyWithValue("keep", "me"))
	g.Expect(alpha.Spec.Config).To(ContainSubstring("endpoint: 0.0.0.0:4318"))

	hub, err := ToHub(alpha)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hub.Annotations).NotTo(HaveKey(AnnotationV1beta1Data))
	g.Expect(hub.APIVersion).To(Equal("opentelemetry.io/v1beta1"))
}

func TestPlainHubNeedsNoAnnotation(t *testing.T) {
	g := NewWithT(t)
	hub := &v1beta1.OpenTelemetryCollector{}
	hub.Spec.TargetAllocator.PrometheusCR.PodMonitorSelector = &metav1.LabelSelector{}
	hub.Spec.TargetAllocator.PrometheusCR.ServiceMonitorSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	alpha, err := FromHub(hub)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(alpha.Annotations).To(BeNil())
}

func TestAlphaEditOfSelectorWins(t *testing.T) {
	g := NewWithT(t)
	alpha, err := FromHub(hubFull())
	g.Expect(err).NotTo(HaveOccurred())
	alpha.Spec.TargetAllocator.PrometheusCR.PodMonitorSelector = map[string]string{"new": "labels"}
	hub, err := ToHub(alpha)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hub.Spec.TargetAllocator.PrometheusCR.PodMonitorSelector).To(Equal(&metav1.LabelSelector{MatchLabels: map[string]string{"new": "labels"}}))
	// The untouched service monitor selector (null in v1beta1: select nothing) comes back.
	g.Expect(hub.Spec.TargetAllocator.PrometheusCR.ServiceMonitorSelector).To(BeNil())
}

func TestHubEditOfAutoscalerWins(t *testing.T) {
	g := NewWithT(t)
	hub, err := ToHub(alphaFull())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hub.Spec.Autoscaler.MinReplicas).To(Equal(ptr.To[int32](1)))
	g.Expect(hub.Spec.Autoscaler.MaxReplicas).To(Equal(ptr.To[int32](5)))
	hub.Spec.Autoscaler.MaxReplicas = ptr.To[int32](9)
	alpha, err := FromHub(hub)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(alpha.Spec.MaxReplicas).To(BeNil())
	g.Expect(alpha.Spec.Autoscaler.MaxReplicas).To(Equal(ptr.To[int32](9)))
	g.Expect(alpha.Status.Messages).To(Equal([]string{"old"}))
}

func TestConversionErrors(t *testing.T) {
	tests := []struct {
		name string
		in   *OpenTelemetryCollector
		want string
	}{
		{name: "bad annotation", in: &OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationV1beta1Data: "{"}}}, want: AnnotationV1beta1Data},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := ToHub(tt.in)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestConvertibleInterface(t *testing.T) {
	g := NewWithT(t)
	hub := &v1beta1.OpenTelemetryCollector{}
	g.Expect(alphaFull().ConvertTo(hub)).To(Succeed())
	g.Expect(hub.Spec.Mode).To(Equal(v1beta1.ModeStatefulSet))
	alpha := &OpenTelemetryCollector{}
	g.Expect(alpha.ConvertFrom(hub)).To(Succeed())
	g.Expect(alpha.Spec.Mode).To(Equal(ModeStatefulSet))
}

// expectSameAlpha compares two v1alpha1 collectors, reading the YAML configurations as data.
func expectSameAlpha(g Gomega, got, want *OpenTelemetryCollector) {
	gotCfg, err := parseConfig(got.Spec.Config)
	g.Expect(err).NotTo(HaveOccurred())
	wantCfg, err := parseConfig(want.Spec.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(equality.Semantic.DeepEqual(gotCfg, wantCfg)).To(BeTrue(), "config differs:\n%s\n---\n%s", got.Spec.Config, want.Spec.Config)
	got, want = got.DeepCopy(), want.DeepCopy()
	got.Spec.Config, want.Spec.Config = "", ""
	got.TypeMeta = want.TypeMeta
	g.Expect(equality.Semantic.DeepEqual(got, want)).To(BeTrue(), "round trip differs:\n got: %+v\nwant: %+v", got, want)
}
