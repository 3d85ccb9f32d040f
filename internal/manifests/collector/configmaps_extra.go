package collector

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/naming"
)

// ExtraConfigMapVolumes returns the pod volumes of spec.configmaps, named configmap-<name>. The
// sidecar injector adds them to the pod.
func ExtraConfigMapVolumes(otelcol v1beta1.OpenTelemetryCollector) []corev1.Volume {
	return extraConfigMapVolumes(otelcol.Spec.ConfigMaps)
}

func extraConfigMapVolumes(cms []v1beta1.ConfigMapsSpec) []corev1.Volume {
	out := make([]corev1.Volume, 0, len(cms))
	for _, cm := range cms {
		out = append(out, corev1.Volume{
			Name: naming.ConfigMapExtra(cm.Name),
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
			}},
		})
	}
	return out
}
