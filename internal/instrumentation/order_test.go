package instrumentation

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

// TestTLSVolumesFollowTheAgentVolume: with exporter TLS, the pod's volumes are the agent's (or
// the Go agent's kernel-debug) first, then the Secret's and the ConfigMap's, as upstream orders
// them (test/injectdiff compares this against upstream's webhook).
func TestTLSVolumesFollowTheAgentVolume(t *testing.T) {
	for lang, agent := range map[Language]string{
		Java: InitContainerName(Java), NodeJS: InitContainerName(NodeJS), Python: InitContainerName(Python),
		DotNet: InitContainerName(DotNet), Go: kernelDebugName,
	} {
		in := single(lang, withAnnotations(appPod(), GoTargetExeAnnotation, "/app/main"))
		in.Options.Disabled = nil
		in.Options.GoInAnyNamespace = true
		in.Instrumentations[lang].Spec.Exporter.TLS = &v1alpha1.TLS{SecretName: "otel-client", ConfigMapName: "otel-ca", CA: "ca.crt", Cert: "tls.crt", Key: "tls.key"}
		res := Inject(in)
		if len(res.Warnings) > 0 {
			t.Fatalf("%s: %v", lang, res.Warnings)
		}
		var names []string
		for _, v := range res.Pod.Spec.Volumes {
			names = append(names, v.Name)
		}
		if want := []string{agent, "otel-auto-secret-otel-client", "otel-auto-configmap-otel-ca"}; !slices.Equal(names, want) {
			t.Errorf("%s: volumes %q, want %q", lang, names, want)
		}
	}
}

// TestNodeJSLeavesTheMetricsExporterToTheAgent: upstream's Node.js agent exports metrics over
// OTLP when OTEL_METRICS_EXPORTER is unset; the injection does not set it (it would override a
// value the container gets from envFrom).
func TestNodeJSLeavesTheMetricsExporterToTheAgent(t *testing.T) {
	res := Inject(single(NodeJS, appPod()))
	if slices.ContainsFunc(res.Pod.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "OTEL_METRICS_EXPORTER" }) {
		t.Errorf("OTEL_METRICS_EXPORTER injected: %v", res.Pod.Spec.Containers[0].Env)
	}
	if !slices.ContainsFunc(res.Pod.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "NODE_OPTIONS" }) {
		t.Error("no NODE_OPTIONS: Node.js was not injected")
	}
}
