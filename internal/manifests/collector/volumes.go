package collector

import (
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/naming"
)

// volumes are otc-internal (the ConfigMap), the target allocator client certificate with mTLS,
// spec.volumes and one volume per spec.configmaps entry.
func (s *state) volumes() []corev1.Volume {
	out := []corev1.Volume{ConfigMapVolume(s.col.Name, s.hash)}
	if s.taClientTLS() {
		out = append(out, corev1.Volume{
			Name: naming.TAClientCertificate(s.col.Name),
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: naming.TAClientCertificate(s.col.Name),
			}},
		})
	}
	out = append(out, s.col.Spec.Volumes...)
	return append(out, extraConfigMapVolumes(s.col.Spec.ConfigMaps)...)
}

// ConfigMapVolume is the otc-internal volume of collector name's ConfigMap for the config of
// the given hash (see ConfigHash), the volume otc-container mounts at /conf; injected sidecars
// mount it too.
func ConfigMapVolume(name, hash string) corev1.Volume {
	return corev1.Volume{
		Name: naming.ConfigMapVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: naming.ConfigMap(name, hash)},
			Items:                []corev1.KeyToPath{{Key: naming.ConfigMapKey, Path: naming.ConfigMapKey}},
		}},
	}
}

// volumeMounts of otc-container; withConfig adds /conf.
func (s *state) volumeMounts(withConfig bool) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	if withConfig {
		out = append(out, corev1.VolumeMount{Name: naming.ConfigMapVolume, MountPath: "/conf"})
	}
	if s.taClientTLS() {
		out = append(out, corev1.VolumeMount{
			Name:      naming.TAClientCertificate(s.col.Name),
			MountPath: collectorconfig.TargetAllocatorTLSDir,
			ReadOnly:  true,
		})
	}
	out = append(out, s.col.Spec.VolumeMounts...)
	for _, cm := range s.col.Spec.ConfigMaps {
		name := naming.ConfigMapExtra(cm.Name)
		out = append(out, corev1.VolumeMount{Name: name, MountPath: path.Join("/var/conf", cm.MountPath, name)})
	}
	return out
}

// taClientTLS reports whether the pods present the operator-issued client certificate to the
// embedded target allocator: mutual TLS is on for it and no opentelemetry.io/target-allocator label
// points the receiver at a standalone one instead.
func (s *state) taClientTLS() bool {
	_, linked := LinkedTargetAllocator(s.col)
	return !linked && s.opts.taMTLS(s.col)
}
