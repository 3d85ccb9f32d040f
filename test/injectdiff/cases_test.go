package injectdiff

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// podCase is one pod sent through both webhooks.
type podCase struct {
	name string
	// ns is the namespace suffix (default main).
	ns          string
	annotations map[string]string
	labels      map[string]string
	containers  []corev1.Container
	// spec adjusts the pod spec after the containers are set.
	spec func(*corev1.PodSpec)
	// workload creates the pod through a workload of this kind (Deployment, StatefulSet or Job)
	// instead of directly, so that the owner chain's names reach the resource attributes.
	workload string
	// untouched: both webhooks are expected to admit the pod without instrumenting it.
	untouched bool
}

// a is the annotation key instrumentation.opentelemetry.io/<k>.
func a(k string) string { return "instrumentation.opentelemetry.io/" + k }

// app is a container named name with env.
func app(name string, env ...corev1.EnvVar) corev1.Container {
	return corev1.Container{Name: name, Image: "example.invalid/" + name + ":1", Env: env}
}

func ev(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

// otherRef is the <ns>/<name> reference to the other namespace's Instrumentation; <side> is
// replaced by each side's name when the pod is built.
const otherRef = "injdiff-<side>-other/shared"

// appLabels are the well-known labels useLabelsForResourceAttributes reads.
var appLabels = map[string]string{
	"app.kubernetes.io/name": "checkout", "app.kubernetes.io/version": "1.2.3",
	"app.kubernetes.io/part-of": "shop", "app.kubernetes.io/instance": "checkout-eu",
	"app.kubernetes.io/component": "api",
}

// resourceAnnotations are resource.opentelemetry.io/<attribute> annotations.
var resourceAnnotations = map[string]string{
	"resource.opentelemetry.io/service.namespace": "shop-team",
	"resource.opentelemetry.io/k8s.cluster.name":  "east-1",
	"resource.opentelemetry.io/custom.attribute":  "from-annotation",
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// cases are the pods: every language, every annotation form and every Instrumentation field
// that reaches the pod.
var cases = []podCase{
	// Java.
	{name: "java", annotations: map[string]string{a("inject-java"): "default"},
		containers: []corev1.Container{app("app", ev("JAVA_TOOL_OPTIONS", "-Xmx256m"))}},
	{name: "java-true", ns: "single", annotations: map[string]string{a("inject-java"): "true"},
		containers: []corev1.Container{app("app")}},
	{name: "java-ns-name", annotations: map[string]string{a("inject-java"): otherRef},
		containers: []corev1.Container{app("app")}},
	{name: "java-extensions", annotations: map[string]string{a("inject-java"): "javaext"},
		containers: []corev1.Container{app("app")}},
	{name: "java-volume-claim", annotations: map[string]string{a("inject-java"): "volumes"},
		containers: []corev1.Container{app("app")}},
	{name: "java-resources", annotations: merge(map[string]string{a("inject-java"): "resources"}, resourceAnnotations),
		labels: appLabels, containers: []corev1.Container{app("app")}},
	{name: "java-security-context", annotations: map[string]string{a("inject-java"): "default"},
		containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1", SecurityContext: &corev1.SecurityContext{
			RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		spec: func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](2000), FSGroup: ptr.To[int64](3000)}
		}},
	{name: "java-deployment", workload: "Deployment", annotations: map[string]string{a("inject-java"): "resources"},
		labels: map[string]string{"app": "shop"}, containers: []corev1.Container{app("app")}},

	{name: "java-tls", annotations: map[string]string{a("inject-java"): "tls"},
		containers: []corev1.Container{app("app")}},
	{name: "java-init-container", annotations: map[string]string{a("inject-java"): "default", a("container-names"): "migrate,app"},
		containers: []corev1.Container{app("app")},
		spec:       func(s *corev1.PodSpec) { s.InitContainers = []corev1.Container{app("migrate")} }},
	{name: "java-statefulset", workload: "StatefulSet", annotations: map[string]string{a("inject-java"): "default"},
		containers: []corev1.Container{app("app")}},
	{name: "java-job", workload: "Job", annotations: map[string]string{a("inject-java"): "resources"},
		containers: []corev1.Container{app("app")}},

	// Node.js.
	{name: "nodejs", annotations: map[string]string{a("inject-nodejs"): "default"},
		containers: []corev1.Container{app("app", ev("NODE_OPTIONS", "--max-old-space-size=256"))}},
	{name: "nodejs-volume-limit", annotations: map[string]string{a("inject-nodejs"): "volumes"},
		containers: []corev1.Container{app("app")}},
	{name: "nodejs-resources", annotations: map[string]string{a("inject-nodejs"): "resources"},
		labels: appLabels, containers: []corev1.Container{app("app")}},

	{name: "nodejs-tls", annotations: map[string]string{a("inject-nodejs"): "tls"},
		containers: []corev1.Container{app("app")}},

	// Python.
	{name: "python", annotations: map[string]string{a("inject-python"): "default"},
		containers: []corev1.Container{app("app", ev("PYTHONPATH", "/app"))}},
	{name: "python-musl", annotations: map[string]string{a("inject-python"): "default", a("otel-python-platform"): "musl"},
		containers: []corev1.Container{app("app")}},
	{name: "python-glibc", annotations: map[string]string{a("inject-python"): "default", a("otel-python-platform"): "glibc"},
		containers: []corev1.Container{app("app")}},
	{name: "python-tls", annotations: map[string]string{a("inject-python"): "tls"},
		containers: []corev1.Container{app("app")}},
	{name: "python-volume-limit", annotations: map[string]string{a("inject-python"): "volumes"},
		containers: []corev1.Container{app("app")}},
	{name: "python-resources", annotations: map[string]string{a("inject-python"): "resources"},
		containers: []corev1.Container{app("app")}},
	{name: "python-namespace-annotation", ns: "nsannot", containers: []corev1.Container{app("app")}},

	// .NET.
	{name: "dotnet", annotations: map[string]string{a("inject-dotnet"): "default"},
		containers: []corev1.Container{app("app")}},
	{name: "dotnet-glibc", annotations: map[string]string{a("inject-dotnet"): "default", a("otel-dotnet-auto-runtime"): "linux-x64"},
		containers: []corev1.Container{app("app")}},
	{name: "dotnet-musl", annotations: map[string]string{a("inject-dotnet"): "default", a("otel-dotnet-auto-runtime"): "linux-musl-x64"},
		containers: []corev1.Container{app("app")}},
	{name: "dotnet-arm64", annotations: map[string]string{a("inject-dotnet"): "default"},
		containers: []corev1.Container{app("app")},
		spec:       func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"} }},
	{name: "dotnet-volume-claim", annotations: map[string]string{a("inject-dotnet"): "volumes"},
		containers: []corev1.Container{app("app")}},
	{name: "dotnet-resources", annotations: map[string]string{a("inject-dotnet"): "resources"},
		containers: []corev1.Container{app("app")}},
	{name: "dotnet-tls", annotations: map[string]string{a("inject-dotnet"): "tls"},
		containers: []corev1.Container{app("app")}},
	{name: "dotnet-user-env", annotations: map[string]string{a("inject-dotnet"): "default"},
		containers: []corev1.Container{app("app", ev("DOTNET_STARTUP_HOOKS", "/app/hook.dll"),
			ev("DOTNET_ADDITIONAL_DEPS", "/app/deps"), ev("DOTNET_SHARED_STORE", "/app/store"))}},

	// Go (an eBPF sidecar).
	{name: "go", annotations: map[string]string{a("inject-go"): "default", a("otel-go-auto-target-exe"): "/usr/src/app/main"},
		containers: []corev1.Container{app("app")}},
	{name: "go-resources", annotations: map[string]string{a("inject-go"): "resources", a("otel-go-auto-target-exe"): "/app"},
		containers: []corev1.Container{app("app")}},
	{name: "go-tls", annotations: map[string]string{a("inject-go"): "tls", a("otel-go-auto-target-exe"): "/app"},
		containers: []corev1.Container{app("app")}},

	// Web servers.
	{name: "apache-httpd", annotations: map[string]string{a("inject-apache-httpd"): "default"},
		containers: []corev1.Container{app("httpd")}},
	{name: "apache-httpd-config", annotations: map[string]string{a("inject-apache-httpd"): "webservers"},
		containers: []corev1.Container{app("httpd")}},
	{name: "apache-httpd-volume-limit", annotations: map[string]string{a("inject-apache-httpd"): "volumes"},
		containers: []corev1.Container{app("httpd")}},
	{name: "apache-httpd-tls", annotations: map[string]string{a("inject-apache-httpd"): "tls"},
		containers: []corev1.Container{app("httpd")}},
	{name: "nginx", annotations: map[string]string{a("inject-nginx"): "default"},
		containers: []corev1.Container{app("nginx")}},
	{name: "nginx-config", annotations: map[string]string{a("inject-nginx"): "webservers"},
		containers: []corev1.Container{app("nginx")}},
	{name: "nginx-volume-limit", annotations: map[string]string{a("inject-nginx"): "volumes"},
		containers: []corev1.Container{app("nginx")}},
	{name: "nginx-tls", annotations: map[string]string{a("inject-nginx"): "tls"},
		containers: []corev1.Container{app("nginx")}},

	// The SDK only (environment, no agent).
	{name: "sdk", annotations: map[string]string{a("inject-sdk"): "default"},
		containers: []corev1.Container{app("app")}},
	{name: "sdk-resources", annotations: merge(map[string]string{a("inject-sdk"): "resources"}, resourceAnnotations),
		labels: appLabels, containers: []corev1.Container{app("app")}},
	{name: "sdk-tls", annotations: map[string]string{a("inject-sdk"): "tls"},
		containers: []corev1.Container{app("app")}},
	{name: "sdk-user-env", annotations: map[string]string{a("inject-sdk"): "resources"}, labels: appLabels,
		containers: []corev1.Container{app("app", ev("OTEL_SERVICE_NAME", "my-service"),
			ev("OTEL_RESOURCE_ATTRIBUTES", "team=own,k8s.pod.name=fixed"), ev("OTEL_PROPAGATORS", "b3multi"))}},

	// Container selection and several languages.
	{name: "container-names", annotations: map[string]string{a("inject-java"): "default", a("container-names"): "api,worker"},
		containers: []corev1.Container{app("api"), app("worker"), app("proxy")}},
	{name: "language-container-names", annotations: map[string]string{a("inject-nodejs"): "default", a("nodejs-container-names"): "web"},
		containers: []corev1.Container{app("proxy"), app("web")}},
	{name: "nginx-container-names", annotations: map[string]string{a("inject-nginx"): "default", a("inject-nginx-container-names"): "nginx"},
		containers: []corev1.Container{app("app"), app("nginx")}},
	{name: "multi", annotations: map[string]string{
		a("inject-java"): "default", a("java-container-names"): "api",
		a("inject-python"): "resources", a("python-container-names"): "worker",
		a("inject-dotnet"): otherRef, a("dotnet-container-names"): "dotnet"},
		containers: []corev1.Container{app("api"), app("worker", ev("PYTHONPATH", "/srv")), app("dotnet")}},
	{name: "multi-tls", annotations: map[string]string{
		a("inject-java"): "tls", a("java-container-names"): "api",
		a("inject-nodejs"): "tls", a("nodejs-container-names"): "web"},
		containers: []corev1.Container{app("api"), app("web")}},
	{name: "multi-sdk", annotations: map[string]string{
		a("inject-nodejs"): "default", a("nodejs-container-names"): "web",
		a("inject-sdk"): "default", a("sdk-container-names"): "native"},
		containers: []corev1.Container{app("web"), app("native")}},

	// Not instrumented, by both.
	{name: "false", untouched: true, annotations: map[string]string{a("inject-java"): "false"},
		containers: []corev1.Container{app("app")}},
	{name: "false-over-namespace", ns: "nsannot", untouched: true, annotations: map[string]string{a("inject-python"): "false"},
		containers: []corev1.Container{app("app")}},
	{name: "missing-instrumentation", untouched: true, annotations: map[string]string{a("inject-java"): "absent"},
		containers: []corev1.Container{app("app")}},
	{name: "multi-without-container-names", untouched: true,
		annotations: map[string]string{a("inject-java"): "default", a("inject-nodejs"): "default"},
		containers:  []corev1.Container{app("app")}},
}
