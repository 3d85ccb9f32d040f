package instrumentation

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1alpha1"
)

const (
	envGoTargetExe   = "OTEL_GO_AUTO_TARGET_EXE"
	kernelDebugName  = "kernel-debug"
	kernelDebugMount = "/sys/kernel/debug"
)

// golang adds the eBPF agent as a privileged sidecar (upstream's: container
// opentelemetry-auto-instrumentation, hostPath /sys/kernel/debug, shareProcessNamespace). The
// SDK settings go to the sidecar, with the attributes of the instrumented container, which is
// itself left unchanged. OTEL_GO_AUTO_TARGET_EXE comes from the otel-go-auto-target-exe
// annotation or spec.go.env and is required.
func (b *builder) golang(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.Go
	pod := b.pod
	if pod.Spec.ShareProcessNamespace != nil && !*pod.Spec.ShareProcessNamespace {
		return errors.New("the pod sets shareProcessNamespace: false, which the Go agent needs")
	}
	sc := spec.SecurityContext.DeepCopy()
	if sc == nil {
		sc = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), Privileged: ptr.To(true)}
	}
	agent := corev1.Container{
		Name:            AgentName,
		Image:           spec.Image,
		Resources:       spec.Resources,
		SecurityContext: sc,
		ImagePullPolicy: inst.Spec.ImagePullPolicy,
		VolumeMounts:    []corev1.VolumeMount{{Name: kernelDebugName, MountPath: kernelDebugMount}},
	}
	if exe, ok := pod.Annotations[GoTargetExeAnnotation]; ok {
		agent.Env = append(agent.Env, corev1.EnvVar{Name: envGoTargetExe, Value: exe})
	}
	agent.Env = appendIfNotSet(agent.Env, spec.Env...)
	commonEnv(inst, &agent)
	if !hasEnv(agent.Env, envGoTargetExe) {
		return errors.New(envGoTargetExe + " is not set: give the executable's path in the " + GoTargetExeAnnotation + " annotation, spec.go.env or spec.env")
	}
	app := b.mustContainer(name).DeepCopy()
	// The kernel-debug volume comes before the exporter's TLS volumes (upstream's order).
	b.addVolume(corev1.Volume{Name: kernelDebugName, VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: kernelDebugMount},
	}})
	b.sdkConfig(inst, &agent, app)
	pod.Spec.ShareProcessNamespace = ptr.To(true)
	pod.Spec.Containers = append(pod.Spec.Containers, agent)
	return nil
}
