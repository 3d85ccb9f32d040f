package collector

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// Labels that tell the collector's Services apart.
const (
	// ServiceTypeLabel is base, headless, monitoring or extension.
	ServiceTypeLabel = "operator.opentelemetry.io/collector-service-type"
	// HeadlessServiceLabel and MonitoringServiceLabel are set to "Exists" on those Services.
	HeadlessServiceLabel   = "operator.opentelemetry.io/collector-headless-service"
	MonitoringServiceLabel = "operator.opentelemetry.io/collector-monitoring-service"
)

// servicePorts are the receiver and exporter ports merged with spec.ports. With an OpenShift Route,
// gRPC ports get appProtocol h2c.
func (s *state) servicePorts() []corev1.ServicePort {
	inferred := make([]corev1.ServicePort, len(s.ports.Service))
	copy(inferred, s.ports.Service)
	if s.col.Spec.Ingress.Type == v1beta1.IngressTypeRoute {
		for i := range inferred {
			if isGRPC(inferred[i]) {
				h2c := "h2c"
				inferred[i].AppProtocol = &h2c
			}
		}
	}
	merged, _ := collectorconfig.MergePorts(userServicePorts(s.col.Spec.Ports), inferred)
	return merged
}

// service is <name>-collector, with the receiver and exporter ports; nil when there are none.
// Daemonset collectors keep traffic on the node (internalTrafficPolicy Local).
func (s *state) service() *corev1.Service {
	ports := s.servicePorts()
	if len(ports) == 0 {
		return nil
	}
	policy := corev1.ServiceInternalTrafficPolicyCluster
	if s.col.Spec.Mode == v1beta1.ModeDaemonSet {
		policy = corev1.ServiceInternalTrafficPolicyLocal
	}
	meta := s.meta(naming.Service(s.col.Name), false)
	meta.Labels[ServiceTypeLabel] = "base"
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			InternalTrafficPolicy: &policy,
			Selector:              s.selectorLabels(),
			Ports:                 ports,
			IPFamilies:            s.col.Spec.IpFamilies,
			IPFamilyPolicy:        s.col.Spec.IpFamilyPolicy,
			TrafficDistribution:   s.col.Spec.TrafficDistribution,
			SessionAffinity:       deref(s.col.Spec.SessionAffinity),
			SessionAffinityConfig: s.col.Spec.SessionAffinityConfig,
		},
	}
}

// headlessService is <name>-collector-headless: the base Service with clusterIP None and the
// OpenShift serving-certificate annotation (the resource's annotations win).
func (s *state) headlessService(base *corev1.Service) *corev1.Service {
	if base == nil {
		return nil
	}
	h := base.DeepCopy()
	h.Name = naming.HeadlessService(s.col.Name)
	h.Labels[HeadlessServiceLabel] = "Exists"
	h.Labels[ServiceTypeLabel] = "headless"
	annotations := map[string]string{"service.beta.openshift.io/serving-cert-secret-name": h.Name + "-tls"}
	for k, v := range h.Annotations {
		annotations[k] = v
	}
	h.Annotations = annotations
	h.Spec.ClusterIP = corev1.ClusterIPNone
	return h
}

// monitoringService is <name>-collector-monitoring with the port "monitoring" of the collector's own
// metrics.
func (s *state) monitoringService() (*corev1.Service, error) {
	_, port, err := collectorconfig.MetricsEndpoint(s.cfg)
	if err != nil {
		return nil, field.Invalid(field.NewPath("spec", "config", "service", "telemetry", "metrics"), "", err.Error())
	}
	name := naming.MonitoringService(s.col.Name)
	meta := s.meta(name, false)
	meta.Labels[MonitoringServiceLabel] = "Exists"
	meta.Labels[ServiceTypeLabel] = "monitoring"
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector:            s.selectorLabels(),
			Ports:               []corev1.ServicePort{{Name: "monitoring", Port: port}},
			IPFamilies:          s.col.Spec.IpFamilies,
			IPFamilyPolicy:      s.col.Spec.IpFamilyPolicy,
			TrafficDistribution: s.col.Spec.TrafficDistribution,
		},
	}, nil
}

// extensionService is <name>-collector-extension with the extensions' ports; nil when there are
// none.
func (s *state) extensionService() *corev1.Service {
	if len(s.ports.Extension) == 0 {
		return nil
	}
	meta := s.meta(naming.ExtensionService(s.col.Name), false)
	meta.Labels[ServiceTypeLabel] = "extension"
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector:            s.selectorLabels(),
			Ports:               append([]corev1.ServicePort(nil), s.ports.Extension...),
			TrafficDistribution: s.col.Spec.TrafficDistribution,
		},
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
