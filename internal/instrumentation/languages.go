package instrumentation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Names and paths of the language agents (upstream's).
const (
	javaMountPath   = "/otel-auto-instrumentation-java"
	nodejsMountPath = "/otel-auto-instrumentation-nodejs"
	pythonMountPath = "/otel-auto-instrumentation-python"

	envJavaToolOptions = "JAVA_TOOL_OPTIONS"
	envNodeOptions     = "NODE_OPTIONS"
	envPythonPath      = "PYTHONPATH"

	pythonPathPrefix = pythonMountPath + "/opentelemetry/instrumentation/auto_instrumentation"
	nodeRequire      = " --require " + nodejsMountPath + "/autoinstrumentation.js"
)

// InitContainerName is the init container that copies lang's agent (java, nodejs, python,
// dotnet).
func InitContainerName(lang Language) string { return AgentName + "-" + string(lang) }

// agentInitContainers are the init container names that mark a pod as instrumented.
var agentInitContainers = []string{
	InitContainerName(Java), InitContainerName(NodeJS), InitContainerName(Python), InitContainerName(DotNet),
	apacheAttachContainer, cloneContainer,
}

// java copies the agent jar and appends -javaagent to JAVA_TOOL_OPTIONS. Each container mounts
// the agent volume at its own path, /otel-auto-instrumentation-java-<container>.
func (b *builder) java(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.Java
	c := b.mustContainer(name)
	if err := rejectValueFrom(c.Env, envJavaToolOptions); err != nil {
		return err
	}
	volume := agentVolume(InitContainerName(Java), spec.VolumeClaimTemplate, spec.VolumeSizeLimit)
	c.Env = appendIfNotSet(c.Env, spec.Env...)
	own := javaMountPath + "-" + name
	addMount(c, corev1.VolumeMount{Name: volume.Name, MountPath: own})
	commonEnv(inst, c)
	arg := " -javaagent:" + own + "/javaagent.jar"
	if len(spec.Extensions) > 0 {
		arg += " -Dotel.javaagent.extensions=" + own + "/extensions"
	}
	if i := envIndex(c.Env, envJavaToolOptions); i >= 0 {
		c.Env[i].Value += arg
	} else {
		c.Env = append(c.Env, corev1.EnvVar{Name: envJavaToolOptions, Value: arg})
	}
	sc := initSecurityContext(inst, c)
	// The agent's volume comes before the exporter's TLS volumes (upstream's order).
	b.addVolume(volume)
	b.sdkConfig(inst, c, c)
	mounts := []corev1.VolumeMount{{Name: volume.Name, MountPath: javaMountPath}}
	b.addInitContainer(corev1.Container{
		Name:            InitContainerName(Java),
		Image:           spec.Image,
		Command:         []string{"cp", "/javaagent.jar", javaMountPath + "/javaagent.jar"},
		Resources:       spec.Resources,
		VolumeMounts:    mounts,
		ImagePullPolicy: inst.Spec.ImagePullPolicy,
		SecurityContext: sc,
	}, name)
	for i, ext := range spec.Extensions {
		b.addInitContainer(corev1.Container{
			Name:         fmt.Sprintf("%s-extension-%d", AgentName, i),
			Image:        ext.Image,
			Command:      []string{"cp", "-r", ext.Dir + "/.", javaMountPath + "/extensions"},
			Resources:    spec.Resources,
			VolumeMounts: mounts,
		}, name)
	}
	return nil
}

// nodejs copies the SDK and appends --require to NODE_OPTIONS.
func (b *builder) nodejs(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.NodeJS
	c := b.mustContainer(name)
	if err := rejectValueFrom(c.Env, envNodeOptions); err != nil {
		return err
	}
	volume := agentVolume(InitContainerName(NodeJS), spec.VolumeClaimTemplate, spec.VolumeSizeLimit)
	c.Env = appendIfNotSet(c.Env, spec.Env...)
	addMount(c, corev1.VolumeMount{Name: volume.Name, MountPath: nodejsMountPath})
	commonEnv(inst, c)
	if i := envIndex(c.Env, envNodeOptions); i >= 0 {
		c.Env[i].Value += nodeRequire
	} else {
		c.Env = append(c.Env, corev1.EnvVar{Name: envNodeOptions, Value: nodeRequire})
	}
	b.copyAgent(NodeJS, inst, spec.Image, []string{"cp", "-r", "/autoinstrumentation/.", nodejsMountPath}, spec.Resources, volume, nodejsMountPath, name)
	b.sdkConfig(inst, c, c)
	return nil
}

// python copies the SDK (glibc or musl build, by the otel-python-platform annotation), wraps
// PYTHONPATH and defaults the exporters to OTLP over HTTP, the protocol the distro supports.
func (b *builder) python(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.Python
	c := b.mustContainer(name)
	if err := rejectValueFrom(c.Env, envPythonPath); err != nil {
		return err
	}
	var src string
	switch platform := b.value(PythonPlatformAnnotation); platform {
	case "", "glibc":
		src = "/autoinstrumentation/."
	case "musl":
		src = "/autoinstrumentation-musl/."
	default:
		return fmt.Errorf("%s=%q is not supported (glibc or musl)", PythonPlatformAnnotation, platform)
	}
	volume := agentVolume(InitContainerName(Python), spec.VolumeClaimTemplate, spec.VolumeSizeLimit)
	c.Env = appendIfNotSet(c.Env, spec.Env...)
	if i := envIndex(c.Env, envPythonPath); i >= 0 {
		c.Env[i].Value = pythonPathPrefix + ":" + c.Env[i].Value + ":" + pythonMountPath
	} else {
		c.Env = append(c.Env, corev1.EnvVar{Name: envPythonPath, Value: pythonPathPrefix + ":" + pythonMountPath})
	}
	addMount(c, corev1.VolumeMount{Name: volume.Name, MountPath: pythonMountPath})
	commonEnv(inst, c)
	c.Env = appendIfNotSet(c.Env,
		corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Value: "http/protobuf"},
		corev1.EnvVar{Name: "OTEL_TRACES_EXPORTER", Value: "otlp"},
		corev1.EnvVar{Name: "OTEL_METRICS_EXPORTER", Value: "otlp"},
		corev1.EnvVar{Name: "OTEL_LOGS_EXPORTER", Value: "otlp"},
	)
	b.copyAgent(Python, inst, spec.Image, []string{"cp", "-r", src, pythonMountPath}, spec.Resources, volume, pythonMountPath, name)
	b.sdkConfig(inst, c, c)
	return nil
}

// copyAgent adds, once per pod, the agent volume and the init container copying the agent into
// it, placed before target when target is an init container. Languages call it before
// sdkConfig, so that the agent's volume comes before the exporter's TLS volumes (upstream's
// order).
func (b *builder) copyAgent(lang Language, inst *v1alpha1.Instrumentation, image string, command []string,
	resources corev1.ResourceRequirements, volume corev1.Volume, mountPath, target string) {
	sc := initSecurityContext(inst, b.mustContainer(target))
	b.addVolume(volume)
	b.addInitContainer(corev1.Container{
		Name:            InitContainerName(lang),
		Image:           image,
		Command:         command,
		Resources:       resources,
		VolumeMounts:    []corev1.VolumeMount{{Name: volume.Name, MountPath: mountPath}},
		ImagePullPolicy: inst.Spec.ImagePullPolicy,
		SecurityContext: sc,
	}, target)
}
