package opampbridge

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// service exposes the bridge's OpAMP proxy on port 80 (ws://<name>-opamp-bridge.<ns>.svc/v1/opamp)
// after the ports of spec.ports, in upstream's order.
func (s *state) service() *corev1.Service {
	ports := make([]corev1.ServicePort, 0, len(s.bridge.Spec.Ports)+1)
	ports = append(ports, s.bridge.Spec.Ports...)
	ports = append(ports, corev1.ServicePort{
		Name:       ServicePortName,
		Port:       ServicePort,
		TargetPort: intstr.FromInt32(OpAMPPort),
	})
	m := s.meta()
	m.Annotations = nil // upstream copies no annotations onto the Service
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Selector:       SelectorLabels(s.bridge),
			Ports:          ports,
			IPFamilies:     s.bridge.Spec.IpFamilies,
			IPFamilyPolicy: s.bridge.Spec.IpFamilyPolicy,
		},
	}
}
