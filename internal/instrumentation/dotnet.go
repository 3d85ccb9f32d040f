package instrumentation

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

// .NET agent: where it is mounted and what the CLR is told (upstream's values). The agent image
// holds, under /autoinstrumentation, the managed parts shared by every platform (net/,
// AdditionalDeps/, store/) and one directory per platform with the native profiler:
// linux-x64/, linux-musl-x64/, linux-arm64/ and linux-musl-arm64/.
const (
	dotnetMountPath   = "/otel-auto-instrumentation-dotnet"
	envDotNetAutoHome = "OTEL_DOTNET_AUTO_HOME"
	dotnetProfilerID  = "{918728DD-259F-4A6A-AC2B-B85E1B658318}"
	dotnetProfilerSO  = "OpenTelemetry.AutoInstrumentation.Native.so"
)

// Values of DotNetRuntimeAnnotation, upstream's: they name the C library the application's
// runtime is built for. The CPU part of the name is not read: see dotnetProfilerPath.
const (
	DotNetRuntimeGlibc = "linux-x64"
	DotNetRuntimeMusl  = "linux-musl-x64"
)

// dotnetProfilerPath is the CORECLR_PROFILER_PATH for the otel-dotnet-auto-runtime annotation's
// value and the pod's spec. The annotation picks glibc (linux-x64, the default) or musl
// (linux-musl-x64); the CPU is x64, as upstream always has it, unless the pod's nodeSelector and
// required node affinity allow only arm64 nodes, in which case the arm64 build of the same C
// library is used (upstream would point an arm64 CLR at the x64 profiler).
func dotnetProfilerPath(runtime string, spec *corev1.PodSpec) (string, error) {
	var libc string
	switch runtime {
	case "", DotNetRuntimeGlibc:
		libc = "linux"
	case DotNetRuntimeMusl:
		libc = "linux-musl"
	default:
		return "", fmt.Errorf("%s=%q is not supported: use %s (the default) or %s; the arm64 build of either is "+
			"chosen by itself when the pod's nodeSelector or required node affinity allows only %s=%s",
			DotNetRuntimeAnnotation, runtime, DotNetRuntimeGlibc, DotNetRuntimeMusl, corev1.LabelArchStable, archARM64)
	}
	cpu := "x64"
	if nodeArch(spec) == archARM64 {
		cpu = "arm64"
	}
	return dotnetMountPath + "/" + libc + "-" + cpu + "/" + dotnetProfilerSO, nil
}

// dotnet copies the .NET agent and sets the CLR profiler and startup hook variables; the
// profiler's build follows the otel-dotnet-auto-runtime annotation and the pod's node
// architecture.
func (b *builder) dotnet(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.DotNet
	c := b.mustContainer(name)
	if err := rejectValueFrom(c.Env, "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE"); err != nil {
		return err
	}
	if hasEnv(c.Env, envDotNetAutoHome) {
		return errors.New(envDotNetAutoHome + " is already set in the container")
	}
	if hasEnv(spec.Env, envDotNetAutoHome) {
		return errors.New(envDotNetAutoHome + " is already set in the Instrumentation's spec.dotnet.env")
	}
	profiler, err := dotnetProfilerPath(b.value(DotNetRuntimeAnnotation), &b.pod.Spec)
	if err != nil {
		return err
	}
	volume := agentVolume(InitContainerName(DotNet), spec.VolumeClaimTemplate, spec.VolumeSizeLimit)
	c.Env = appendIfNotSet(c.Env, spec.Env...)
	addMount(c, corev1.VolumeMount{Name: volume.Name, MountPath: dotnetMountPath})
	commonEnv(inst, c)
	for _, v := range []struct {
		name, value string
		concat      bool
	}{
		{"CORECLR_ENABLE_PROFILING", "1", false},
		{"CORECLR_PROFILER", dotnetProfilerID, false},
		{"CORECLR_PROFILER_PATH", profiler, false},
		{"DOTNET_STARTUP_HOOKS", dotnetMountPath + "/net/OpenTelemetry.AutoInstrumentation.StartupHook.dll", true},
		{"DOTNET_ADDITIONAL_DEPS", dotnetMountPath + "/AdditionalDeps", true},
		{envDotNetAutoHome, dotnetMountPath, false},
		{"DOTNET_SHARED_STORE", dotnetMountPath + "/store", true},
	} {
		i := envIndex(c.Env, v.name)
		switch {
		case i < 0:
			c.Env = append(c.Env, corev1.EnvVar{Name: v.name, Value: v.value})
		case v.concat && c.Env[i].ValueFrom == nil:
			c.Env[i].Value += ":" + v.value
		}
	}
	b.copyAgent(DotNet, inst, spec.Image, []string{"cp", "-r", "/autoinstrumentation/.", dotnetMountPath}, spec.Resources, volume, dotnetMountPath, name)
	b.sdkConfig(inst, c, c)
	return nil
}
