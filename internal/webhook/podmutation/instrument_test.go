package podmutation_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// newInstrumentation creates an Instrumentation with an image for every language and waits until
// the manager's cache has it.
func newInstrumentation(t testing.TB, ns, name string, edit ...func(*v1alpha1.Instrumentation)) *v1alpha1.Instrumentation {
	t.Helper()
	inst := &v1alpha1.Instrumentation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.InstrumentationSpec{
			Exporter:    v1alpha1.Exporter{Endpoint: "http://collector:4318"},
			Propagators: []v1alpha1.Propagator{v1alpha1.TraceContext, v1alpha1.Baggage},
			Java:        v1alpha1.Java{Image: "java:1"},
			NodeJS:      v1alpha1.NodeJS{Image: "nodejs:1"},
			Python:      v1alpha1.Python{Image: "python:1"},
			DotNet:      v1alpha1.DotNet{Image: "dotnet:1"},
			Go:          v1alpha1.Go{Image: "go:1"},
			ApacheHttpd: v1alpha1.ApacheHttpd{Image: "apache:1"},
			Nginx:       v1alpha1.Nginx{Image: "nginx:1"},
		},
	}
	for _, e := range edit {
		e(inst)
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() error {
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(inst), &v1alpha1.Instrumentation{})
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())
	return inst
}

func initNames(p *corev1.Pod) []string { return names(p.Spec.InitContainers) }

func envNames(c corev1.Container) []string {
	out := make([]string, len(c.Env))
	for i, e := range c.Env {
		out[i] = e.Name
	}
	return out
}

// TestInstrumentEachLanguage: a pod annotated for each language comes back from the API server
// with the language's agent, the common environment in upstream's order, and the
// otelop.io/instrumented record.
func TestInstrumentEachLanguage(t *testing.T) {
	ns := newNamespace(t, "each-language", nil)
	labelNamespace(t, ns) // the Go agent's opt-in
	inst := newInstrumentation(t, ns, "otel")
	tests := []struct {
		lang     instrumentation.Language
		extra    map[string]string
		check    func(g Gomega, p *corev1.Pod)
		langEnvs []string
	}{
		{lang: instrumentation.Java, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(initNames(p)).To(Equal([]string{"setup", "opentelemetry-auto-instrumentation-java"}))
			g.Expect(envValue(p.Spec.Containers[0], "JAVA_TOOL_OPTIONS")).To(Equal(" -javaagent:/otel-auto-instrumentation-java-app/javaagent.jar"))
		}},
		{lang: instrumentation.NodeJS, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(initNames(p)).To(ContainElement("opentelemetry-auto-instrumentation-nodejs"))
			g.Expect(envValue(p.Spec.Containers[0], "NODE_OPTIONS")).To(ContainSubstring("--require /otel-auto-instrumentation-nodejs/autoinstrumentation.js"))
		}},
		{lang: instrumentation.Python, extra: map[string]string{instrumentation.PythonPlatformAnnotation: "musl"}, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(p.Spec.InitContainers[1].Command).To(ContainElement("/autoinstrumentation-musl/."))
			g.Expect(envValue(p.Spec.Containers[0], "OTEL_EXPORTER_OTLP_PROTOCOL")).To(Equal("http/protobuf"))
		}},
		{lang: instrumentation.DotNet, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(envValue(p.Spec.Containers[0], "CORECLR_PROFILER_PATH")).To(Equal("/otel-auto-instrumentation-dotnet/linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"))
		}},
		{lang: instrumentation.Go, extra: map[string]string{instrumentation.GoTargetExeAnnotation: "/app"}, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(names(p.Spec.Containers)).To(Equal([]string{"app", "opentelemetry-auto-instrumentation"}))
			g.Expect(p.Spec.ShareProcessNamespace).To(Equal(ptr.To(true)))
			g.Expect(envValue(p.Spec.Containers[1], "OTEL_GO_AUTO_TARGET_EXE")).To(Equal("/app"))
		}},
		{lang: instrumentation.ApacheHttpd, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(initNames(p)).To(Equal([]string{"setup", "otel-agent-source-container-clone", "otel-agent-attach-apache"}))
		}},
		{lang: instrumentation.Nginx, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(initNames(p)).To(Equal([]string{"setup", "otel-agent-source-container-clone", "otel-agent-attach-nginx"}))
		}},
		{lang: instrumentation.SDK, check: func(g Gomega, p *corev1.Pod) {
			g.Expect(initNames(p)).To(Equal([]string{"setup"}))
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.lang), func(t *testing.T) {
			g := NewWithT(t)
			ann := map[string]string{instrumentation.InjectAnnotation(tt.lang): "true"}
			for k, v := range tt.extra {
				ann[k] = v
			}
			got, warnings := create(t, newPod(ns, "p-"+string(tt.lang), ann))
			g.Expect(warnings).To(BeEmpty())
			g.Expect(got.Annotations).To(HaveKeyWithValue(instrumentation.InjectedAnnotation,
				string(tt.lang)+"="+ns+"/otel@"+itoa(inst.Generation)))
			agent := got.Spec.Containers[len(got.Spec.Containers)-1]
			envs := envNames(agent)
			g.Expect(envs[:2]).To(Equal([]string{"OTEL_NODE_IP", "OTEL_POD_IP"}))
			g.Expect(envs[len(envs)-1]).To(Equal("OTEL_RESOURCE_ATTRIBUTES"))
			g.Expect(envs).To(ContainElements("OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_PROPAGATORS"))
			tt.check(g, got)
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestNamespaceRequestsInstrumentation: a namespace's annotation instruments its pods; a pod's
// "false" opts out.
func TestNamespaceRequestsInstrumentation(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "ns-python", map[string]string{instrumentation.InjectAnnotation(instrumentation.Python): "true"})
	newInstrumentation(t, ns, "otel")
	got, warnings := create(t, newPod(ns, "plain", nil))
	g.Expect(warnings).To(BeEmpty())
	g.Expect(initNames(got)).To(ContainElement("opentelemetry-auto-instrumentation-python"))
	got, warnings = create(t, newPod(ns, "opt-out", map[string]string{instrumentation.InjectAnnotation(instrumentation.Python): "false"}))
	g.Expect(warnings).To(BeEmpty())
	expectUnchanged(g, got)
	g.Expect(got.Annotations).NotTo(HaveKey(instrumentation.InjectedAnnotation))
}

// TestMissingInstrumentation: a pod of a Deployment asking for an Instrumentation that does not
// exist is created unchanged, the client gets a warning that says why, and a Warning Event goes
// to the Deployment.
func TestMissingInstrumentation(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "missing-inst", nil)
	rs := replicaSetOfDeployment(t, ns, "shop")
	owned := func(name string) *corev1.Pod {
		pod := newPod(ns, name, map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "nope"})
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
		return pod
	}
	got, warnings := create(t, owned("p"))
	expectUnchanged(g, got)
	g.Expect(got.Annotations).NotTo(HaveKey(instrumentation.InjectedAnnotation))
	g.Expect(warnings).To(ConsistOf(ContainSubstring("java instrumentation not injected: instrumentation.opentelemetry.io/inject-java=\"nope\": Instrumentation " + ns + "/nope not found")))

	// A second pod of the same Deployment adds to the same Event (a series), not a new one.
	create(t, owned("p2"))
	g.Eventually(func(g Gomega) {
		events := &eventsv1.EventList{}
		g.Expect(env.Client.List(context.Background(), events, client.InNamespace(ns))).To(Succeed())
		var ours []eventsv1.Event
		for _, e := range events.Items {
			if e.Reason == podmutation.EventReason {
				ours = append(ours, e)
			}
		}
		g.Expect(ours).To(HaveLen(1))
		e := ours[0]
		g.Expect(e.Type).To(Equal(corev1.EventTypeWarning))
		g.Expect(e.Regarding.Kind).To(Equal("Deployment"))
		g.Expect(e.Regarding.Name).To(Equal("shop"))
		g.Expect(e.Note).To(ContainSubstring("Instrumentation " + ns + "/nope not found"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestNotInstrumented: requests that cannot be honoured leave the pod unchanged, with a warning
// that says why.
func TestNotInstrumented(t *testing.T) {
	none := newNamespace(t, "no-inst", nil)
	two := newNamespace(t, "two-inst", nil)
	newInstrumentation(t, two, "a")
	newInstrumentation(t, two, "b")
	tests := []struct {
		name, ns string
		ann      map[string]string
		warning  string
	}{
		{name: "no instrumentation", ns: none, ann: map[string]string{"instrumentation.opentelemetry.io/inject-java": "true"},
			warning: `namespace "no-inst" has no Instrumentation`},
		{name: "two instrumentations", ns: two, ann: map[string]string{"instrumentation.opentelemetry.io/inject-java": "true"},
			warning: "has 2 Instrumentations (a, b); name one in the annotation"},
		{name: "unknown container", ns: two, ann: map[string]string{"instrumentation.opentelemetry.io/inject-java": "a", instrumentation.ContainerNamesAnnotation: "ghost"},
			warning: `the pod has no container "ghost"`},
		{name: "multi-instrumentation without container names", ns: two, ann: map[string]string{
			"instrumentation.opentelemetry.io/inject-java": "a", "instrumentation.opentelemetry.io/inject-python": "a"},
			warning: "each needs its own instrumentation.opentelemetry.io/<language>-container-names annotation"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, warnings := create(t, newPod(tt.ns, "p"+string(rune('a'+i)), tt.ann))
			expectUnchanged(g, got)
			g.Expect(got.Annotations).NotTo(HaveKey(instrumentation.InjectedAnnotation))
			g.Expect(warnings).To(ConsistOf(ContainSubstring(tt.warning)))
		})
	}
}

// TestDisabledLanguage: with upstream's default switches Go is off; a pod asking for it is
// admitted unchanged with a warning.
func TestDisabledLanguage(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "disabled", nil)
	newInstrumentation(t, ns, "otel")
	h, err := podmutation.New(podmutation.Options{Manifests: manifests, Collectors: mgr.GetClient(), APIReader: mgr.GetAPIReader()}, admission.NewDecoder(scheme))
	g.Expect(err).NotTo(HaveOccurred())
	resp := h.Handle(context.Background(), request(t, newPod(ns, "p", map[string]string{
		instrumentation.InjectAnnotation(instrumentation.Go): "true", instrumentation.GoTargetExeAnnotation: "/app"})))
	g.Expect(resp.Allowed).To(BeTrue())
	g.Expect(resp.Patches).To(BeEmpty())
	g.Expect(resp.Warnings).To(ConsistOf(ContainSubstring("support for go auto-instrumentation is not enabled")))
}

// TestPlainPodMakesNoRequest: admitting a pod that asks for nothing, in a namespace that asks for
// nothing, sends no request to the API server.
func TestPlainPodMakesNoRequest(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "plain", nil)
	newInstrumentation(t, ns, "otel")
	before := len(reads.snapshot())
	for i := range 5 {
		got, warnings := create(t, newPod(ns, "p"+itoa(int64(i)), nil))
		g.Expect(warnings).To(BeEmpty())
		expectUnchanged(g, got)
	}
	var during []string
	for _, r := range reads.snapshot()[before:] {
		if !strings.Contains(r, "watch=true") { // watches reconnect on their own schedule
			during = append(during, r)
		}
	}
	g.Expect(during).To(BeEmpty())
}
