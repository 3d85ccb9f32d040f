package collector

import (
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

const otlpDebug = `{"receivers":{"otlp":{"protocols":{"grpc":{}}}},"exporters":{"debug":{}},
"service":{"pipelines":{"traces":{"receivers":["otlp"],"exporters":["debug"]}}}}`

const promDebug = `{"receivers":{"prometheus":{"config":{"scrape_configs":[{"job_name":"x"}]}}},"exporters":{"debug":{}},
"service":{"pipelines":{"metrics":{"receivers":["prometheus"],"exporters":["debug"]}}}}`

func collector(t *testing.T, config string, mutate func(*v1beta1.OpenTelemetryCollectorSpec)) *v1beta1.OpenTelemetryCollector {
	t.Helper()
	c := &v1beta1.OpenTelemetryCollector{}
	c.Name = "test"
	if err := json.Unmarshal([]byte(config), &c.Spec.Config); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(&c.Spec)
	}
	return c
}

func TestDefault(t *testing.T) {
	g := NewWithT(t)
	c := collector(t, otlpDebug, func(s *v1beta1.OpenTelemetryCollectorSpec) {
		s.Replicas = ptr.To[int32](3)
		s.Autoscaler = &v1beta1.AutoscalerSpec{MaxReplicas: ptr.To[int32](5)}
		s.TargetAllocator.Enabled = true
		s.Ingress.Type = v1beta1.IngressTypeIngress
	})
	g.Expect(ApplyDefaults(c, mcollector.Options{OperandNetworkPolicy: true})).To(Succeed())
	s := c.Spec
	g.Expect(s.Mode).To(Equal(v1beta1.ModeDeployment))
	g.Expect(s.UpgradeStrategy).To(Equal(v1beta1.UpgradeStrategyAutomatic))
	g.Expect(s.ManagementState).To(Equal(v1beta1.ManagementStateManaged))
	g.Expect(*s.TargetAllocator.Replicas).To(Equal(int32(1)))
	g.Expect(*s.Autoscaler.MinReplicas).To(Equal(int32(3)))
	g.Expect(*s.Autoscaler.TargetCPUUtilization).To(Equal(int32(90)))
	g.Expect(s.Ingress.RuleType).To(Equal(v1beta1.IngressRuleTypePath))
	g.Expect(*s.NetworkPolicy.Enabled).To(BeTrue())
	grpc := s.Config.Receivers.Object["otlp"].(map[string]any)["protocols"].(map[string]any)["grpc"].(map[string]any)
	g.Expect(grpc["endpoint"]).To(Equal("0.0.0.0:4317"))
	g.Expect(s.Config.Service.Telemetry).NotTo(BeNil())

	// Idempotent: a second pass changes nothing.
	again := c.DeepCopy()
	g.Expect(ApplyDefaults(again, mcollector.Options{OperandNetworkPolicy: true})).To(Succeed())
	g.Expect(equality.Semantic.DeepEqual(again, c)).To(BeTrue())
}

func TestDefaultLeavesSetValues(t *testing.T) {
	g := NewWithT(t)
	c := collector(t, otlpDebug, func(s *v1beta1.OpenTelemetryCollectorSpec) {
		s.Mode = v1beta1.ModeSidecar
		s.Ingress.Type = v1beta1.IngressTypeRoute
		s.Autoscaler = &v1beta1.AutoscalerSpec{MaxReplicas: ptr.To[int32](5), TargetMemoryUtilization: ptr.To[int32](70)}
	})
	g.Expect(ApplyDefaults(c, mcollector.Options{})).To(Succeed())
	g.Expect(c.Spec.Mode).To(Equal(v1beta1.ModeSidecar))
	g.Expect(c.Spec.Replicas).To(Equal(ptr.To[int32](1)))
	g.Expect(c.Spec.TargetAllocator.Replicas).To(BeNil())
	g.Expect(c.Spec.Autoscaler.TargetCPUUtilization).To(BeNil())
	g.Expect(c.Spec.Ingress.Route.Termination).To(Equal(v1beta1.TLSRouteTerminationTypeEdge))
	g.Expect(c.Spec.NetworkPolicy.Enabled).To(BeNil())
}

func paths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestValidate(t *testing.T) {
	cpu := func(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.DecimalSI) }
	for _, tc := range []struct {
		name   string
		config string
		old    func(*v1beta1.OpenTelemetryCollectorSpec)
		spec   func(*v1beta1.OpenTelemetryCollectorSpec)
		opts   ValidateOptions
		want   []string
		warn   string
	}{
		{name: "valid deployment", config: otlpDebug},
		{
			name: "mode change", config: otlpDebug,
			old:  func(s *v1beta1.OpenTelemetryCollectorSpec) { s.Mode = v1beta1.ModeDeployment },
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) { s.Mode = v1beta1.ModeDaemonSet },
			want: []string{"spec.mode"},
		},
		{
			name: "sidecar bans", config: otlpDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Mode = v1beta1.ModeSidecar
				s.Tolerations = []corev1.Toleration{{Key: "a"}}
				s.PriorityClassName = "high"
				s.Affinity = &corev1.Affinity{}
				s.AdditionalContainers = []corev1.Container{{Name: "x"}}
				s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{}}
				s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
				s.DaemonSetUpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
				s.DeploymentUpdateStrategy.Type = appsv1.RecreateDeploymentStrategyType
				s.Ingress.Type = v1beta1.IngressTypeIngress
			},
			want: []string{"spec.volumeClaimTemplates", "spec.persistentVolumeClaimRetentionPolicy", "spec.tolerations",
				"spec.priorityClassName", "spec.affinity", "spec.additionalContainers", "spec.daemonSetUpdateStrategy",
				"spec.deploymentUpdateStrategy", "spec.ingress.type"},
		},
		{
			name: "target allocator in deployment without prometheus", config: otlpDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Mode = v1beta1.ModeDeployment
				s.TargetAllocator.Enabled = true
				s.TargetAllocator.AllocationStrategy = v1beta1.TargetAllocatorAllocationStrategyPerNode
			},
			want: []string{"spec.targetAllocator.enabled", "spec.targetAllocator.allocationStrategy", "spec.config.receivers.prometheus"},
		},
		{
			name: "target allocator daemonset needs per-node", config: promDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Mode = v1beta1.ModeDaemonSet
				s.TargetAllocator.Enabled = true
			},
			want: []string{"spec.targetAllocator.allocationStrategy"},
		},
		{
			name:   "target allocator needs scrape configs or prometheusCR",
			config: strings.Replace(promDebug, `"scrape_configs":[{"job_name":"x"}]`, "", 1),
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Mode = v1beta1.ModeStatefulSet
				s.TargetAllocator.Enabled = true
			},
			want: []string{"spec.config.receivers.prometheus.config.scrape_configs"},
		},
		{
			name: "ports", config: otlpDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Ports = []v1beta1.PortsSpec{{ServicePort: corev1.ServicePort{Name: "a-very-long-port-name", Port: 70000}}}
			},
			want: []string{"spec.ports[0].name", "spec.ports[0].port"},
		},
		{
			name: "autoscaler", config: otlpDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Replicas = ptr.To[int32](6)
				s.Autoscaler = &v1beta1.AutoscalerSpec{
					MinReplicas: ptr.To[int32](7), MaxReplicas: ptr.To[int32](5),
					Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
						ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3601)},
						ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](-1)},
					},
					Metrics: []v1beta1.MetricSpec{
						{Type: autoscalingv2.ResourceMetricSourceType},
						{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
							Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: cpu(0)}}},
						{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
							Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: cpu(2)}}},
					},
				}
			},
			want: []string{"spec.replicas", "spec.autoscaler.minReplicas",
				"spec.autoscaler.behavior.scaleDown.stabilizationWindowSeconds",
				"spec.autoscaler.behavior.scaleUp.stabilizationWindowSeconds",
				"spec.autoscaler.metrics[0].type", "spec.autoscaler.metrics[1].pods.target.averageValue"},
		},
		{
			name: "min without max", config: otlpDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Autoscaler = &v1beta1.AutoscalerSpec{MinReplicas: ptr.To[int32](1)}
			},
			want: []string{"spec.autoscaler.maxReplicas"},
		},
		{
			name: "subdomain needs hostname", config: otlpDebug,
			spec: func(s *v1beta1.OpenTelemetryCollectorSpec) {
				s.Ingress.Type = v1beta1.IngressTypeIngress
				s.Ingress.RuleType = v1beta1.IngressRuleTypeSubdomain
				s.Ingress.Hostname = "*"
			},
			want: []string{"spec.ingress.hostname"},
		},
		{
			name: "fips", config: otlpDebug,
			opts: ValidateOptions{FIPSDisabledComponents: []string{"exporter.debug", "receiver.jaeger"}},
			want: []string{"spec.config.exporters.debug"},
		},
		{
			name:   "config errors are rooted at spec.config, null objects warn",
			config: `{"receivers":{"otlp":null},"exporters":{"debug":{}},"service":{"pipelines":{"traces":{"receivers":["otlp","nope"],"exporters":["debug"]}}}}`,
			want:   []string{"spec.config.service.pipelines.traces.receivers[1]"},
			warn:   "null",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := collector(t, tc.config, tc.spec)
			if c.Spec.Mode == "" {
				c.Spec.Mode = v1beta1.ModeDeployment
			}
			var old *v1beta1.OpenTelemetryCollector
			if tc.old != nil {
				old = collector(t, tc.config, tc.old)
			}
			tc.opts.Manifests = mcollector.DefaultOptions()
			errs, warnings := Validate(c, old, tc.opts)
			g.Expect(paths(errs)).To(ConsistOf(tc.want), "%v", errs)
			for _, e := range errs {
				if e.Type != field.ErrorTypeNotFound {
					g.Expect(e.Detail).NotTo(BeEmpty(), "every error says what is allowed")
				}
			}
			if tc.warn != "" {
				g.Expect(strings.Join(warnings, "\n")).To(ContainSubstring(tc.warn))
			}
		})
	}
}
