package instrumentation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Environment variables every injection sets (names as upstream).
const (
	EnvServiceName        = "OTEL_SERVICE_NAME"
	EnvResourceAttributes = "OTEL_RESOURCE_ATTRIBUTES"
	EnvPropagators        = "OTEL_PROPAGATORS"
	EnvTracesSampler      = "OTEL_TRACES_SAMPLER"
	EnvTracesSamplerArg   = "OTEL_TRACES_SAMPLER_ARG"
	EnvEndpoint           = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvCertificate        = "OTEL_EXPORTER_OTLP_CERTIFICATE"
	EnvClientCertificate  = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"
	EnvClientKey          = "OTEL_EXPORTER_OTLP_CLIENT_KEY"
	EnvPodName            = "OTEL_RESOURCE_ATTRIBUTES_POD_NAME"
	EnvPodUID             = "OTEL_RESOURCE_ATTRIBUTES_POD_UID"
	EnvNodeName           = "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME"
	EnvPodIP              = "OTEL_POD_IP"
	EnvNodeIP             = "OTEL_NODE_IP"
)

func envIndex(env []corev1.EnvVar, name string) int {
	for i := range env {
		if env[i].Name == name {
			return i
		}
	}
	return -1
}

func hasEnv(env []corev1.EnvVar, name string) bool { return envIndex(env, name) >= 0 }

// appendIfNotSet appends the variables the list does not define yet: what the user (or an earlier
// layer) set wins.
func appendIfNotSet(env []corev1.EnvVar, add ...corev1.EnvVar) []corev1.EnvVar {
	for _, e := range add {
		if !hasEnv(env, e.Name) {
			env = append(env, e)
		}
	}
	return env
}

// setOrReplace sets one variable in place, or appends it.
func setOrReplace(env []corev1.EnvVar, e corev1.EnvVar) []corev1.EnvVar {
	if i := envIndex(env, e.Name); i >= 0 {
		env[i] = e
		return env
	}
	return append(env, e)
}

// moveToEnd moves name to the end of env, so that its $(VAR) references resolve: Kubernetes
// expands only variables defined earlier in the list.
func moveToEnd(env []corev1.EnvVar, name string) []corev1.EnvVar {
	i := envIndex(env, name)
	if i < 0 || i == len(env)-1 {
		return env
	}
	e := env[i]
	env = append(env[:i], env[i+1:]...)
	return append(env, e)
}

// rejectValueFrom fails when the container sets one of names from a valueFrom source: the agent
// cannot append to a value it does not know, so the container is left alone (upstream's rule).
func rejectValueFrom(env []corev1.EnvVar, names ...string) error {
	for _, n := range names {
		if i := envIndex(env, n); i >= 0 && env[i].ValueFrom != nil {
			return fmt.Errorf("the container sets %s with valueFrom, which cannot be extended", n)
		}
	}
	return nil
}

func fieldRef(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}
