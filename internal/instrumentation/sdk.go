package instrumentation

import (
	"path/filepath"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Names shared by the injected objects, as upstream names them.
const (
	// AgentName names the Go sidecar and prefixes the init containers and volumes of the
	// language agents (opentelemetry-auto-instrumentation-<language>).
	AgentName = "opentelemetry-auto-instrumentation"
)

var defaultVolumeSize = resource.MustParse("200Mi")

// agentVolume is the volume an agent is copied into: an ephemeral PVC when the language sets a
// volumeClaimTemplate, else an emptyDir (200Mi unless volumeLimitSize says otherwise).
func agentVolume(name string, claim corev1.PersistentVolumeClaimTemplate, size *resource.Quantity) corev1.Volume {
	if !reflect.ValueOf(claim).IsZero() {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: claim.DeepCopy()},
		}}
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: sizeOrDefault(size)},
	}}
}

func sizeOrDefault(size *resource.Quantity) *resource.Quantity {
	if size == nil {
		q := defaultVolumeSize.DeepCopy()
		return &q
	}
	q := size.DeepCopy()
	return &q
}

// initSecurityContext is the Instrumentation's initContainerSecurityContext, else the
// instrumented container's.
func initSecurityContext(inst *v1alpha1.Instrumentation, app *corev1.Container) *corev1.SecurityContext {
	if inst.Spec.InitContainerSecurityContext != nil {
		return inst.Spec.InitContainerSecurityContext.DeepCopy()
	}
	return app.SecurityContext.DeepCopy()
}

// commonEnv puts OTEL_NODE_IP and OTEL_POD_IP at the front of the container's env (unless
// set) and appends the Instrumentation's env the container does not set.
func commonEnv(inst *v1alpha1.Instrumentation, c *corev1.Container) {
	var head []corev1.EnvVar
	if !hasEnv(c.Env, EnvNodeIP) {
		head = append(head, fieldRef(EnvNodeIP, "status.hostIP"))
	}
	if !hasEnv(c.Env, EnvPodIP) {
		head = append(head, fieldRef(EnvPodIP, "status.podIP"))
	}
	c.Env = append(head, c.Env...)
	c.Env = appendIfNotSet(c.Env, inst.Spec.Env...)
}

// sdkConfig appends the SDK settings to agent (the container running the agent: the application
// itself, or the Go sidecar), with the resource attributes of app, in upstream's order:
// OTEL_SERVICE_NAME, the exporter (endpoint, TLS files), the downward-API variables the attributes
// refer to, OTEL_PROPAGATORS, the sampler, and OTEL_RESOURCE_ATTRIBUTES last.
func (b *builder) sdkConfig(inst *v1alpha1.Instrumentation, agent, app *corev1.Container) {
	useLabels := inst.Spec.Defaults.UseLabelsForResourceAttributes
	res, existing := resourceMap(resourceInput{pod: b.pod, namespace: b.namespace, owners: b.in.Owners, inst: inst, app: app})
	// The downward-API references replace the values known at admission (upstream's rule), but
	// never a key the container's own OTEL_RESOURCE_ATTRIBUTES sets.
	ref := func(k, env string) {
		if !existing[k] {
			res[k] = "$(" + env + ")"
		}
	}
	agent.Env = appendIfNotSet(agent.Env, corev1.EnvVar{Name: EnvServiceName, Value: serviceName(b.pod, useLabels, res, app.Name)})
	b.exporter(inst.Spec.Exporter, agent)

	agent.Env = appendIfNotSet(agent.Env, fieldRef(EnvPodName, "metadata.name"))
	ref("k8s.pod.name", EnvPodName)
	if inst.Spec.Resource.AddK8sUIDAttributes && res["k8s.pod.uid"] == "" {
		agent.Env = appendIfNotSet(agent.Env, fieldRef(EnvPodUID, "metadata.uid"))
		ref("k8s.pod.uid", EnvPodUID)
	}
	if i := envIndex(agent.Env, EnvResourceAttributes); i < 0 || !strings.Contains(agent.Env[i].Value, "service.version") {
		if v := serviceVersion(b.pod, useLabels, app.Image); v != "" && !existing["service.version"] {
			res["service.version"] = v
		}
	}
	if res["k8s.node.name"] == "" && !existing["k8s.node.name"] {
		agent.Env = appendIfNotSet(agent.Env, fieldRef(EnvNodeName, "spec.nodeName"))
		ref("k8s.node.name", EnvNodeName)
	}
	attrs := attributesString(res)
	switch i := envIndex(agent.Env, EnvResourceAttributes); {
	case i >= 0 && attrs == "":
	case i >= 0 && agent.Env[i].Value != "" && !strings.HasSuffix(agent.Env[i].Value, ","):
		agent.Env[i].Value += "," + attrs
	case i >= 0:
		agent.Env[i].Value += attrs
	default:
		agent.Env = append(agent.Env, corev1.EnvVar{Name: EnvResourceAttributes, Value: attrs})
	}
	if len(inst.Spec.Propagators) > 0 {
		names := make([]string, len(inst.Spec.Propagators))
		for i, p := range inst.Spec.Propagators {
			names[i] = string(p)
		}
		agent.Env = appendIfNotSet(agent.Env, corev1.EnvVar{Name: EnvPropagators, Value: strings.Join(names, ",")})
	}
	if s := inst.Spec.Sampler; s.Type != "" && !hasEnv(agent.Env, EnvTracesSampler) && !hasEnv(agent.Env, EnvTracesSamplerArg) {
		agent.Env = append(agent.Env, corev1.EnvVar{Name: EnvTracesSampler, Value: string(s.Type)})
		if s.Argument != "" {
			agent.Env = append(agent.Env, corev1.EnvVar{Name: EnvTracesSamplerArg, Value: s.Argument})
		}
	}
	agent.Env = moveToEnd(agent.Env, EnvResourceAttributes)
}

// exporter sets the OTLP endpoint and, with TLS, mounts the Secret and ConfigMap holding the
// certificates (read-only) and points the certificate variables at them; absolute file paths
// are used as they are.
func (b *builder) exporter(exp v1alpha1.Exporter, c *corev1.Container) {
	if exp.Endpoint != "" {
		c.Env = appendIfNotSet(c.Env, corev1.EnvVar{Name: EnvEndpoint, Value: exp.Endpoint})
	}
	tls := exp.TLS
	if tls == nil {
		return
	}
	secretVolume := truncate("otel-auto-secret-"+tls.SecretName, 63)
	secretPath := "/otel-auto-instrumentation-secret-" + tls.SecretName
	cmVolume := truncate("otel-auto-configmap-"+tls.ConfigMapName, 63)
	cmPath := "/otel-auto-instrumentation-configmap-" + tls.ConfigMapName
	file := func(dir, f string) string {
		if filepath.IsAbs(f) {
			return f
		}
		return dir + "/" + f
	}
	if tls.CA != "" {
		dir := secretPath
		if tls.ConfigMapName != "" {
			dir = cmPath
		}
		c.Env = appendIfNotSet(c.Env, corev1.EnvVar{Name: EnvCertificate, Value: file(dir, tls.CA)})
	}
	if tls.Cert != "" {
		c.Env = appendIfNotSet(c.Env, corev1.EnvVar{Name: EnvClientCertificate, Value: file(secretPath, tls.Cert)})
	}
	if tls.Key != "" {
		c.Env = appendIfNotSet(c.Env, corev1.EnvVar{Name: EnvClientKey, Value: file(secretPath, tls.Key)})
	}
	if tls.SecretName != "" {
		b.addVolume(corev1.Volume{Name: secretVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: tls.SecretName},
		}})
		addMount(c, corev1.VolumeMount{Name: secretVolume, MountPath: secretPath, ReadOnly: true})
	}
	if tls.ConfigMapName != "" {
		b.addVolume(corev1.Volume{Name: cmVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: tls.ConfigMapName}},
		}})
		addMount(c, corev1.VolumeMount{Name: cmVolume, MountPath: cmPath, ReadOnly: true})
	}
}

// truncate shortens a name to max characters, ending it with an alphanumeric character.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.TrimRight(s[:max], "-.")
}

// addMount adds m unless the container already mounts that volume.
func addMount(c *corev1.Container, m corev1.VolumeMount) {
	for _, have := range c.VolumeMounts {
		if have.Name == m.Name {
			return
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, m)
}
