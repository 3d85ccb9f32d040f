package realnode_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/test/realnode"
)

// agentInstrumentation points every language whose agent an init container copies at its
// stand-in image.
const agentInstrumentation = `
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: agents
spec:
  imagePullPolicy: IfNotPresent
  exporter:
    endpoint: http://collector.example:4318
  java:
    image: ` + realnode.AgentImage + `
  nodejs:
    image: ` + realnode.NodeJSAgentImage + `
  python:
    image: ` + realnode.PythonAgentImage + `
  dotnet:
    image: ` + realnode.DotNetAgentImage + `
  apacheHttpd:
    image: ` + realnode.WebServerAgentImage + `
  nginx:
    image: ` + realnode.WebServerAgentImage + `
`

// agentPathCase is one language (and platform) whose agent an init container copies.
type agentPathCase struct {
	name        string
	annotations map[string]string
	// image is the application's image (default realnode.PathCheckImage).
	image string
	// vars must each name at least one path, all of which exist.
	vars []string
	// named are paths the web server's configuration must load or include (and that exist);
	// directives are lines the configuration must hold.
	named, directives []string
	// files must be in the agent volume (mounted at root), absent must not.
	root          string
	files, absent []string
	// confFiles must be in the web server's configuration folder confDir.
	confDir   string
	confFiles []string
	// control is a path under root that does not exist: pathcheck must report it missing.
	control string
}

var agentPathCases = []agentPathCase{
	{name: "java", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-java": "true"},
		vars: []string{"JAVA_TOOL_OPTIONS"}, root: "/otel-auto-instrumentation-java-app", files: []string{"javaagent.jar"},
		control: "/otel-auto-instrumentation-java-app/agent.jar"},
	{name: "nodejs", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-nodejs": "true"},
		vars: []string{"NODE_OPTIONS"}, root: "/otel-auto-instrumentation-nodejs",
		files:   []string{"autoinstrumentation.js", "node_modules/@opentelemetry/auto-instrumentations-node/package.json"},
		control: "/otel-auto-instrumentation-nodejs/autoinstrumentation/autoinstrumentation.js"},
	{name: "python-glibc", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-python": "true"},
		vars: []string{"PYTHONPATH"}, root: "/otel-auto-instrumentation-python",
		files:   []string{"opentelemetry/instrumentation/auto_instrumentation/sitecustomize.py", realnode.PythonGlibcMarker},
		absent:  []string{realnode.PythonMuslMarker},
		control: "/otel-auto-instrumentation-python/autoinstrumentation/opentelemetry"},
	{name: "python-musl", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-python": "true",
		"instrumentation.opentelemetry.io/otel-python-platform": "musl"},
		vars: []string{"PYTHONPATH"}, root: "/otel-auto-instrumentation-python",
		files:   []string{"opentelemetry/instrumentation/auto_instrumentation/sitecustomize.py", realnode.PythonMuslMarker},
		absent:  []string{realnode.PythonGlibcMarker},
		control: "/otel-auto-instrumentation-python/autoinstrumentation-musl/opentelemetry"},
	{name: "dotnet-glibc", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-dotnet": "true"},
		vars: []string{"CORECLR_PROFILER_PATH", "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE", "OTEL_DOTNET_AUTO_HOME"},
		root: "/otel-auto-instrumentation-dotnet", files: []string{"linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		// The path this project set before issue 34: the CLR found no profiler there.
		control: "/otel-auto-instrumentation-dotnet/linux/OpenTelemetry.AutoInstrumentation.Native.so"},
	{name: "dotnet-musl", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-dotnet": "true",
		"instrumentation.opentelemetry.io/otel-dotnet-auto-runtime": "linux-musl-x64"},
		vars: []string{"CORECLR_PROFILER_PATH", "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE", "OTEL_DOTNET_AUTO_HOME"},
		root: "/otel-auto-instrumentation-dotnet", files: []string{"linux-musl-x64/OpenTelemetry.AutoInstrumentation.Native.so"},
		control: "/otel-auto-instrumentation-dotnet/linux-musl/OpenTelemetry.AutoInstrumentation.Native.so"},
	apacheCase, nginxCase,
}

// webAgent is where the web-server injection mounts the agent volume.
const webAgent = "/opt/opentelemetry-webserver/agent"

// apacheCase: the generated opentemetry_agent.conf (sic, upstream's name) loads the SDK libraries
// and the Apache 2.4 module from the agent volume, and the cloned httpd.conf includes it. The
// control is a module name the image does not ship.
var apacheCase = agentPathCase{
	name: "apache-httpd", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-apache-httpd": "true"},
	image: realnode.ApacheAppImage,
	named: append(sdkLibs(), webAgent+"/WebServerModule/Apache/libmod_apache_otel.so",
		"/usr/local/apache2/conf/opentemetry_agent.conf", "/usr/local/apache2/modules/mod_mpm_event.so"),
	directives: []string{"Include /usr/local/apache2/conf/opentemetry_agent.conf",
		"ApacheModuleServiceInstanceId apache-httpd", "ApacheModuleEnabled ON"},
	root: webAgent, files: []string{"VERSION.txt", "conf/opentelemetry_sdk_log4cxx.xml", "sdk_lib/lib/libopentelemetry_webserver_sdk.so",
		"WebServerModule/Apache/libmod_apache_otel.so"},
	confDir: "/usr/local/apache2/conf", confFiles: []string{"httpd.conf", "mime.types", "opentemetry_agent.conf"},
	control: webAgent + "/WebServerModule/Apache/libmod_apache_otel24.so",
}

// nginxCase: the cloned nginx.conf loads the module built for the version `nginx -v` reported
// in the clone container, and includes conf.d/opentelemetry_agent.conf through the http block's
// conf.d/*.conf; LD_LIBRARY_PATH names sdk_lib/lib. The control is the module without a version
// folder.
var nginxCase = agentPathCase{
	name: "nginx", annotations: map[string]string{"instrumentation.opentelemetry.io/inject-nginx": "true"},
	image: realnode.NginxAppImage, vars: []string{"LD_LIBRARY_PATH"},
	named: []string{webAgent + "/WebServerModule/Nginx/" + realnode.NginxVersion + "/ngx_http_opentelemetry_module.so",
		"/etc/nginx/conf.d/opentelemetry_agent.conf", "/etc/nginx/conf.d/default.conf"},
	directives: []string{"env OTEL_RESOURCE_ATTRIBUTES;", "NginxModuleServiceInstanceId nginx;", "NginxModuleEnabled ON;"},
	root:       webAgent, files: []string{"VERSION.txt", "conf/opentelemetry_sdk_log4cxx.xml", "sdk_lib/lib/libopentelemetry_webserver_sdk.so"},
	confDir: "/etc/nginx", confFiles: []string{"nginx.conf", "version.txt", "conf.d/default.conf", "conf.d/opentelemetry_agent.conf"},
	control: webAgent + "/WebServerModule/Nginx/ngx_http_opentelemetry_module.so",
}

// sdkLibs are the SDK libraries in the agent volume.
func sdkLibs() []string {
	var out []string
	for _, l := range realnode.WebServerSDKLibs {
		out = append(out, webAgent+"/sdk_lib/lib/"+l)
	}
	return out
}

// TestInjectedAgentPathsExist: for every language whose agent an init container copies (Java,
// Node.js, Python glibc and musl, .NET glibc and musl, Apache HTTPD, nginx), a pod annotated for
// it gets the init containers, which copy the stand-in agent image (laid out like the real one)
// into the agent volume (for the web servers: run their shell scripts, cloning the server's
// configuration and adding the agent's), and the application process finds every path the
// injected environment and the web server's configuration name. The positive control is a
// variable of the pod naming a path the image does not have (for .NET the linux/ path this
// project set before issue 34): it is reported missing.
func TestInjectedAgentPathsExist(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	g.Expect(cluster.LoadAgentImages()).To(Succeed())
	ns := namespace(t)
	g.Expect(create(ns, agentInstrumentation)).To(Succeed())
	for _, c := range agentPathCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			logs := runPathCheck(t, ns, c)
			t.Logf("pathcheck:\n%s", grepLines(logs, "path ", "tree ", "conf "))
			lines := strings.Split(logs, "\n")
			for _, v := range c.vars {
				g.Expect(slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "path "+v+" ") })).To(BeTrue(),
					"%s names no path", v)
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "path ") && !strings.HasPrefix(l, "path OTEL_PATHCHECK_CONTROL ") {
					g.Expect(l).To(Or(HaveSuffix(" ok file"), HaveSuffix(" ok dir")), "a path the environment names is not in the container")
				}
			}
			g.Expect(lines).To(ContainElement("path OTEL_PATHCHECK_CONTROL "+c.control+" missing"), "the positive control")
			for _, p := range c.named {
				g.Expect(slices.ContainsFunc(lines, func(l string) bool {
					return strings.HasPrefix(l, "path conf:") && strings.HasSuffix(l, " "+p+" ok file")
				})).To(BeTrue(), "the web server's configuration does not load or include %s", p)
			}
			for _, d := range c.directives {
				g.Expect(slices.ContainsFunc(lines, func(l string) bool {
					return strings.HasPrefix(l, "conf ") && strings.HasSuffix(l, ": "+d)
				})).To(BeTrue(), "the web server's configuration lacks %q", d)
			}
			tree := treeOf(lines, c.root)
			g.Expect(tree).To(ContainElements(c.files), "the agent volume at %s", c.root)
			for _, f := range c.absent {
				g.Expect(tree).NotTo(ContainElement(f), "the agent volume at %s", c.root)
			}
			if c.confDir != "" {
				g.Expect(treeOf(lines, c.confDir)).To(ContainElements(c.confFiles), "the configuration at %s", c.confDir)
			}
		})
	}
}

// runPathCheck creates a pod running pathcheck with case c's annotations and control variable,
// waits until it has exited successfully and returns its log. The pod webhook reads
// Instrumentations from the operator's cache, which may not have seen the one just created: a
// pod admitted without the injection is deleted and created again.
func runPathCheck(t *testing.T, ns string, c agentPathCase) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	pods := cluster.Clientset.CoreV1().Pods(ns)
	g.Eventually(func(g Gomega) {
		err := pods.Delete(ctx, c.name, *metav1.NewDeleteOptions(0))
		g.Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Eventually(func() bool {
			_, err := pods.Get(ctx, c.name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}).WithTimeout(30 * time.Second).Should(BeTrue())
		p, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: ns, Annotations: c.annotations},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "app", Image: cmp.Or(c.image, realnode.PathCheckImage), ImagePullPolicy: corev1.PullNever,
				Env: []corev1.EnvVar{{Name: "OTEL_PATHCHECK_CONTROL", Value: c.control}},
			}}},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "OTEL_SERVICE_NAME")),
			"the pod webhook injected nothing (yet)")
		g.Expect(p.Spec.InitContainers).NotTo(BeEmpty(), "no init container copies the agent")
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		p, err := pods.Get(ctx, c.name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Status.Phase).NotTo(Equal(corev1.PodFailed), "%s", podStatus(p))
		g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), "%s", podStatus(p))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	logs, err := podLogs(ctx, ns, c.name, "app")
	g.Expect(err).NotTo(HaveOccurred())
	return logs
}

// treeOf returns the files pathcheck listed under root.
func treeOf(lines []string, root string) []string {
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "tree "+root); ok && (rest == "" || rest[0] == ' ') {
			return strings.Fields(rest)
		}
	}
	return nil
}

// podStatus summarizes a pod's phase and its containers' states.
func podStatus(p *corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %s", p.Status.Phase)
	for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		switch {
		case s.State.Terminated != nil:
			fmt.Fprintf(&b, "; %s exited %d (%s)", s.Name, s.State.Terminated.ExitCode, s.State.Terminated.Reason)
		case s.State.Waiting != nil:
			fmt.Fprintf(&b, "; %s waiting (%s: %s)", s.Name, s.State.Waiting.Reason, s.State.Waiting.Message)
		default:
			fmt.Fprintf(&b, "; %s running", s.Name)
		}
	}
	return b.String()
}
