package instrumentation

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/golden"
)

// deploymentOwners is the owner chain of a pod of Deployment "shop" in namespace "apps".
var deploymentOwners = []Owner{
	{Kind: "ReplicaSet", Name: "shop-7d9f", UID: "rs-uid"},
	{Kind: "Deployment", Name: "shop", UID: "deploy-uid"},
}

func appPod(containers ...corev1.Container) *corev1.Pod {
	if len(containers) == 0 {
		containers = []corev1.Container{{Name: "app", Image: "registry.example/shop:1.4.2"}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "apps", GenerateName: "shop-7d9f-",
			Labels:          map[string]string{"app": "shop"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "shop-7d9f", UID: "rs-uid", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{Containers: containers},
	}
}

// fullInstrumentation sets every common field: endpoint, propagators, sampler, env, resource
// attributes and each language's image, env and resources.
func fullInstrumentation() *v1alpha1.Instrumentation {
	res := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	return &v1alpha1.Instrumentation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "otel", Generation: 3},
		Spec: v1alpha1.InstrumentationSpec{
			Exporter:    v1alpha1.Exporter{Endpoint: "http://otel-collector.observability:4318"},
			Propagators: []v1alpha1.Propagator{v1alpha1.TraceContext, v1alpha1.Baggage, v1alpha1.B3},
			Sampler:     v1alpha1.Sampler{Type: v1alpha1.ParentBasedTraceIDRatio, Argument: "0.25"},
			Resource:    v1alpha1.Resource{Attributes: map[string]string{"deployment.environment": "prod"}},
			Env:         []corev1.EnvVar{{Name: "OTEL_EXPORTER_OTLP_TIMEOUT", Value: "20"}},
			Java:        v1alpha1.Java{Image: "java-agent:2.10.0", Env: []corev1.EnvVar{{Name: "OTEL_JAVAAGENT_DEBUG", Value: "true"}}, Resources: res},
			NodeJS:      v1alpha1.NodeJS{Image: "nodejs-sdk:0.57.0", Env: []corev1.EnvVar{{Name: "OTEL_NODE_DISABLED_INSTRUMENTATIONS", Value: "fs"}}, Resources: res},
			Python:      v1alpha1.Python{Image: "python-sdk:0.50b0", Env: []corev1.EnvVar{{Name: "OTEL_PYTHON_LOG_CORRELATION", Value: "true"}}, Resources: res},
			DotNet:      v1alpha1.DotNet{Image: "dotnet-agent:1.10.0", Env: []corev1.EnvVar{{Name: "OTEL_DOTNET_AUTO_LOG_DIRECTORY", Value: "/tmp"}}, Resources: res},
			Go:          v1alpha1.Go{Image: "go-agent:v0.19.0-alpha", Env: []corev1.EnvVar{{Name: "OTEL_GO_AUTO_SHOW_VERIFIER_LOG", Value: "true"}}, Resources: res},
			ApacheHttpd: v1alpha1.ApacheHttpd{Image: "apache-httpd-agent:1.0.4", Attrs: []corev1.EnvVar{{Name: "ApacheModuleRetryAttempts", Value: "3"}}, Resources: res},
			Nginx:       v1alpha1.Nginx{Image: "nginx-agent:1.0.4", Attrs: []corev1.EnvVar{{Name: "NginxModuleRetryAttempts", Value: "3"}}, Resources: res},
		},
	}
}

type goldenCase struct {
	name  string
	input func() Input
}

func single(lang Language, pod *corev1.Pod) Input {
	return Input{
		Pod:              pod,
		Namespace:        metav1.ObjectMeta{Name: "apps"},
		Owners:           deploymentOwners,
		Instrumentations: map[Language]*v1alpha1.Instrumentation{lang: fullInstrumentation()},
		Options:          DefaultOptions(),
	}
}

func withAnnotations(p *corev1.Pod, kv ...string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

var goldenCases = []goldenCase{
	{"java", func() Input { return single(Java, appPod()) }},
	{"java-user-env", func() Input {
		// The user's variables win; JAVA_TOOL_OPTIONS is appended to and OTEL_RESOURCE_ATTRIBUTES
		// extended with the keys it lacks.
		return single(Java, appPod(corev1.Container{Name: "app", Image: "shop@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Env: []corev1.EnvVar{
			{Name: "JAVA_TOOL_OPTIONS", Value: "-Xmx512m"},
			{Name: "OTEL_SERVICE_NAME", Value: "my-shop"},
			{Name: "OTEL_RESOURCE_ATTRIBUTES", Value: "team=payments,k8s.namespace.name=override"},
			{Name: "OTEL_PROPAGATORS", Value: "xray"},
			{Name: "OTEL_TRACES_SAMPLER_ARG", Value: "0.5"},
			{Name: "OTEL_JAVAAGENT_DEBUG", Value: "false"},
		}}))
	}},
	{"java-extensions-pvc", func() Input {
		in := single(Java, appPod())
		in.Instrumentations[Java].Spec.Java.Extensions = []v1alpha1.Extensions{{Image: "ext:1", Dir: "/ext"}}
		in.Instrumentations[Java].Spec.Java.VolumeClaimTemplate = corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
		in.Instrumentations[Java].Spec.ImagePullPolicy = corev1.PullIfNotPresent
		in.Instrumentations[Java].Spec.InitContainerSecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
		return in
	}},
	{"java-valuefrom", func() Input {
		return single(Java, appPod(corev1.Container{Name: "app", Image: "shop:1", Env: []corev1.EnvVar{
			{Name: "JAVA_TOOL_OPTIONS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "opts", LocalObjectReference: corev1.LocalObjectReference{Name: "jvm"}}}},
		}}))
	}},
	{"java-init-container", func() Input {
		p := appPod()
		p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "shop-migrate:1"}}
		return single(Java, withAnnotations(p, ContainerNamesAnnotation, "migrate,app"))
	}},
	{"java-init-container-listed-last", func() Input {
		// The agent must still be copied before the init container runs.
		p := appPod()
		p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "setup:1"}, {Name: "migrate", Image: "shop-migrate:1"}}
		in := single(Java, withAnnotations(p, ContainerNamesAnnotation, "app,migrate"))
		in.Instrumentations[Java].Spec.Java.Extensions = []v1alpha1.Extensions{{Image: "ext:1", Dir: "/ext"}}
		return in
	}},
	{"nodejs", func() Input {
		return single(NodeJS, appPod(corev1.Container{Name: "app", Image: "node-shop:3", Env: []corev1.EnvVar{{Name: "NODE_OPTIONS", Value: "--max-old-space-size=512"}}}))
	}},
	{"python", func() Input { return single(Python, appPod()) }},
	{"python-musl-pythonpath", func() Input {
		in := single(Python, appPod(corev1.Container{Name: "app", Image: "py:3.12-alpine", Env: []corev1.EnvVar{{Name: "PYTHONPATH", Value: "/app/lib"}, {Name: "OTEL_TRACES_EXPORTER", Value: "console"}}}))
		in.Namespace.Annotations = map[string]string{PythonPlatformAnnotation: "musl"}
		return in
	}},
	{"python-bad-platform", func() Input {
		return single(Python, withAnnotations(appPod(), PythonPlatformAnnotation, "windows"))
	}},
	{"dotnet", func() Input { return single(DotNet, appPod()) }},
	{"dotnet-musl", func() Input {
		return single(DotNet, withAnnotations(appPod(corev1.Container{Name: "app", Image: "dotnet-shop:8", Env: []corev1.EnvVar{{Name: "DOTNET_STARTUP_HOOKS", Value: "/app/hook.dll"}}}),
			DotNetRuntimeAnnotation, "linux-musl-x64"))
	}},
	{"dotnet-arm64", func() Input {
		p := appPod()
		p.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"}
		return single(DotNet, p)
	}},
	{"dotnet-musl-arm64", func() Input {
		// The namespace's runtime, and an arm64-only required node affinity.
		in := single(DotNet, appPod())
		in.Pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}},
			}}},
		}}}
		in.Namespace.Annotations = map[string]string{DotNetRuntimeAnnotation: "linux-musl-x64"}
		return in
	}},
	{"dotnet-bad-runtime", func() Input {
		return single(DotNet, withAnnotations(appPod(), DotNetRuntimeAnnotation, "linux-arm64"))
	}},
	{"go", func() Input {
		in := single(Go, withAnnotations(appPod(), GoTargetExeAnnotation, "/app/shop"))
		in.Options.Disabled = nil
		in.Namespace.Labels = map[string]string{GoAgentNamespaceLabel: "true"}
		return in
	}},
	{"go-without-exe", func() Input {
		in := single(Go, appPod())
		in.Options.Disabled = nil
		in.Namespace.Labels = map[string]string{GoAgentNamespaceLabel: "true"}
		return in
	}},
	// The namespace is not labelled: no privileged agent, a warning naming the label.
	{"go-namespace-not-allowed", func() Input {
		in := single(Go, withAnnotations(appPod(), GoTargetExeAnnotation, "/app/shop"))
		in.Options.Disabled = nil
		in.Namespace.Labels = map[string]string{GoAgentNamespaceLabel: "yes"}
		return in
	}},
	// --go-instrumentation-any-namespace: upstream's behaviour, no label needed.
	{"go-any-namespace", func() Input {
		in := single(Go, withAnnotations(appPod(), GoTargetExeAnnotation, "/app/shop"))
		in.Options.Disabled = nil
		in.Options.GoInAnyNamespace = true
		return in
	}},
	{"go-disabled", func() Input { return single(Go, withAnnotations(appPod(), GoTargetExeAnnotation, "/app/shop")) }},
	{"apache-httpd", func() Input {
		return single(ApacheHttpd, appPod(corev1.Container{Name: "httpd", Image: "httpd:2.4",
			VolumeMounts:   []corev1.VolumeMount{{Name: "conf", MountPath: "/usr/local/apache2/conf"}, {Name: "data", MountPath: "/data"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/"}}}}))
	}},
	{"nginx", func() Input {
		in := single(Nginx, appPod(corev1.Container{Name: "web", Image: "nginx:1.27", Env: []corev1.EnvVar{{Name: "LD_LIBRARY_PATH", Value: "/opt/lib"}}}))
		in.Options.Disabled = map[Language]bool{Go: true}
		return in
	}},
	{"sdk", func() Input { return single(SDK, appPod()) }},
	{"tls", func() Input {
		in := single(SDK, appPod())
		in.Instrumentations[SDK].Spec.Exporter.TLS = &v1alpha1.TLS{SecretName: "otel-client", ConfigMapName: "otel-ca", CA: "ca.crt", Cert: "tls.crt", Key: "/etc/keys/tls.key"}
		return in
	}},
	{"multi-java-python", func() Input {
		p := appPod(corev1.Container{Name: "api", Image: "api:2"}, corev1.Container{Name: "worker", Image: "worker:5"}, corev1.Container{Name: "proxy", Image: "envoy:1"})
		withAnnotations(p, ContainerNamesAnnotationOf(Java), "api", ContainerNamesAnnotationOf(Python), "worker")
		in := single(Java, p)
		in.Instrumentations[Python] = fullInstrumentation()
		return in
	}},
	{"multi-without-names", func() Input {
		in := single(Java, appPod())
		in.Instrumentations[Python] = fullInstrumentation()
		return in
	}},
	{"multi-overlap", func() Input {
		p := appPod(corev1.Container{Name: "api", Image: "api:2"}, corev1.Container{Name: "worker", Image: "worker:5"})
		withAnnotations(p, ContainerNamesAnnotationOf(Java), "api,worker", ContainerNamesAnnotationOf(Python), "worker")
		in := single(Java, p)
		in.Instrumentations[Python] = fullInstrumentation()
		return in
	}},
	{"multi-off-container-names", func() Input {
		// Without multi-instrumentation container-names applies to every language.
		p := appPod(corev1.Container{Name: "api", Image: "api:2"}, corev1.Container{Name: "worker", Image: "worker:5"})
		withAnnotations(p, ContainerNamesAnnotation, "api,worker", ContainerNamesAnnotationOf(Python), "api")
		in := single(Java, p)
		in.Instrumentations[SDK] = fullInstrumentation()
		in.Options.MultiInstrumentation = false
		return in
	}},
	{"container-missing", func() Input {
		return single(Java, withAnnotations(appPod(), ContainerNamesAnnotation, "app,ghost"))
	}},
	{"container-names-invalid", func() Input {
		return single(Java, withAnnotations(appPod(), ContainerNamesAnnotation, "app;rm -rf"))
	}},
	{"namespace-container-names", func() Input {
		in := single(NodeJS, appPod(corev1.Container{Name: "istio-proxy", Image: "proxy:1"}, corev1.Container{Name: "web", Image: "web:9"}))
		in.Namespace.Annotations = map[string]string{ContainerNamesAnnotation: "web"}
		return in
	}},
	{"resource-attributes", func() Input {
		p := appPod()
		p.Name = "batch-28731-x2x"
		p.Labels = map[string]string{"app.kubernetes.io/name": "nightly", "app.kubernetes.io/version": "7", "app.kubernetes.io/part-of": "shop"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "batch-28731", UID: "job-uid", Controller: ptr.To(true)}}
		withAnnotations(p, ResourceAnnotationPrefix+"team", "payments", ResourceAnnotationPrefix+"service.namespace", "retail", ResourceAnnotationPrefix+"service.name", "ignored-in-attributes")
		in := single(SDK, p)
		in.Owners = []Owner{{Kind: "Job", Name: "batch-28731", UID: "job-uid"}, {Kind: "CronJob", Name: "batch", UID: "cron-uid"}}
		in.Instrumentations[SDK].Spec.Defaults.UseLabelsForResourceAttributes = true
		in.Instrumentations[SDK].Spec.Resource.AddK8sUIDAttributes = true
		return in
	}},
	{"statefulset-labels", func() Input {
		p := appPod()
		p.Labels = map[string]string{"app.kubernetes.io/instance": "db-main", "app.kubernetes.io/name": "db"}
		in := single(SDK, p)
		in.Owners = []Owner{{Kind: "StatefulSet", Name: "db", UID: "sts-uid"}}
		in.Instrumentations[SDK].Spec.Defaults.UseLabelsForResourceAttributes = true
		return in
	}},
	{"already-instrumented", func() Input {
		return single(Java, withAnnotations(appPod(), InjectedAnnotation, "java=apps/otel@2"))
	}},
}

// goldenOutput is what a golden file holds.
type goldenOutput struct {
	Injected string      `json:"injected"`
	Warnings []string    `json:"warnings,omitempty"`
	Pod      *corev1.Pod `json:"pod"`
}

func TestInjectGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input()
			before := in.Pod.DeepCopy()
			res := Inject(in)
			if !equalYAML(t, before, in.Pod) {
				t.Fatal("Inject modified its input pod")
			}
			got, err := yaml.Marshal(goldenOutput{Injected: FormatInjected(res.Injected), Warnings: res.Warnings, Pod: res.Pod})
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name+".golden", got)
			// Idempotent: injecting the result again changes nothing.
			in.Pod = res.Pod
			again := Inject(in)
			if again.Changed() || !equalYAML(t, res.Pod, again.Pod) {
				t.Error("a second injection changed the pod")
			}
		})
	}
}

func equalYAML(t *testing.T, a, b any) bool {
	t.Helper()
	ya, err := yaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	yb, err := yaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ya, yb)
}

// TestCollectorSidecarIsNotInstrumentation: a regular-container collector sidecar (Kubernetes
// before 1.29) sets OTEL_RESOURCE_ATTRIBUTES_NODE_NAME too; the pod is still instrumented.
func TestCollectorSidecarIsNotInstrumentation(t *testing.T) {
	p := appPod(corev1.Container{Name: "app", Image: "a:1"},
		corev1.Container{Name: "otc-container", Image: "collector:1", Env: []corev1.EnvVar{fieldRef(EnvNodeName, "spec.nodeName")}})
	res := Inject(single(Java, p))
	if !res.Changed() || len(res.Warnings) > 0 {
		t.Fatalf("not instrumented: %v", res.Warnings)
	}
	if got := res.Pod.Spec.Containers[1]; len(got.Env) != 1 {
		t.Fatalf("the sidecar was changed: %v", got.Env)
	}
}
