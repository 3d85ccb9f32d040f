package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/plan"
	"github.com/otelop/otelop/internal/render"
)

// collectorYAML is the collector of the tests; %s is the debug exporter's verbosity, %s the
// Service's sessionAffinity and %d spec.configVersions.
const collectorYAML = `apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: planned
  namespace: %s
spec:
  mode: deployment
  sessionAffinity: %s
  configVersions: %d
  config:
    receivers:
      otlp:
        protocols:
          grpc:
            endpoint: 0.0.0.0:4317
    exporters:
      debug:
        verbosity: %s
    service:
      pipelines:
        traces:
          receivers: [otlp]
          exporters: [debug]
`

// spec is one version of the test collector.
type spec struct {
	verbosity, affinity string
	configVersions      int
}

func (s spec) yaml(ns string) string {
	return fmt.Sprintf(collectorYAML, ns, s.affinity, s.configVersions, s.verbosity)
}

// diff runs `render --diff` on s as the read-only reviewer and returns the exit code, the plan
// (from -o json) and the text form (from a second run, which must agree on the code).
func diff(t *testing.T, ns string, s spec) (int, plan.Plan, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(file, []byte(s.yaml(ns)), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut, text, textErr bytes.Buffer
	code := render.Main([]string{"--diff", "-f", file, "-o", "json", "--kubeconfig", reviewerKubeconfig}, nil, &out, &errOut)
	var p plan.Plan
	if code != 1 {
		if err := json.Unmarshal(out.Bytes(), &p); err != nil {
			t.Fatalf("exit %d, output is not a plan: %v\n%s\n%s", code, err, out.String(), errOut.String())
		}
	}
	textCode := render.Main([]string{"--diff", "-f", file, "--kubeconfig", reviewerKubeconfig}, nil, &text, &textErr)
	if textCode != code {
		t.Fatalf("text exit %d, json exit %d\n%s%s", textCode, code, text.String(), textErr.String())
	}
	t.Logf("render --diff (exit %d):\n%s%s", code, text.String(), textErr.String())
	return code, p, text.String()
}

// applyCollector applies s server-side as a GitOps tool does and waits until the operator has
// reconciled that generation (status.observedGeneration, written after apply and prune).
func applyCollector(t *testing.T, ns string, s spec) {
	t.Helper()
	g := NewWithT(t)
	u := &unstructured.Unstructured{}
	g.Expect(sigsyaml.Unmarshal([]byte(s.yaml(ns)), &u.Object)).To(Succeed())
	ctx := context.Background()
	g.Expect(k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed())
	g.Eventually(func(g Gomega) {
		col := &v1beta1.OpenTelemetryCollector{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned"}, col)).To(Succeed())
		g.Expect(col.Status.ObservedGeneration).To(Equal(col.Generation))
	}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
}

// byKind returns the planned objects of kind.
func byKind(p plan.Plan, kind string) []plan.Object {
	var out []plan.Object
	for _, c := range p.Collectors {
		for _, o := range c.Objects {
			if o.Kind == kind {
				out = append(out, o)
			}
		}
	}
	return out
}

func only(t *testing.T, objs []plan.Object, action plan.Action) plan.Object {
	t.Helper()
	var hit []plan.Object
	for _, o := range objs {
		if o.Action == action {
			hit = append(hit, o)
		}
	}
	if len(hit) != 1 {
		t.Fatalf("want one %s among %+v", action, objs)
	}
	return hit[0]
}

// TestPlanBeforeApply walks one collector through its life: not created yet (everything is
// created), reconciled (no changes: the control for false positives), a configuration change
// (the Deployment's pods roll, reason config), a Service-only change (no roll), and a smaller
// configVersions (old ConfigMaps pruned, a ConfigMap someone else labelled never). After each
// planned change the change is applied and the operator's result is checked against the plan,
// and the plan of the applied spec is empty again.
func TestPlanBeforeApply(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := "plan"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	v1 := spec{verbosity: "basic", affinity: "None", configVersions: 3}

	// (d) Not created yet: everything is created, nothing else.
	code, p, text := diff(t, ns, v1)
	g.Expect(code).To(Equal(2))
	g.Expect(p.Changes).To(BeTrue())
	g.Expect(p.Collectors).To(HaveLen(1))
	g.Expect(p.Collectors[0].Exists).To(BeFalse())
	g.Expect(p.Collectors[0].Objects).NotTo(BeEmpty())
	for _, o := range p.Collectors[0].Objects {
		g.Expect(o.Action).To(Equal(plan.Create), "%s %s", o.Kind, o.Name)
	}
	g.Expect(byKind(p, "Deployment")).To(HaveLen(1))
	g.Expect(byKind(p, "ConfigMap")).To(HaveLen(1))
	g.Expect(text).To(ContainSubstring("+ create Deployment plan/planned-collector"))

	applyCollector(t, ns, v1)
	for _, o := range p.Collectors[0].Objects { // the operator created what was planned
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(o.APIVersion)
		u.SetKind(o.Kind)
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, u)).To(Succeed(), "%s %s", o.Kind, o.Name)
	}

	// (c) Reconciled and unchanged: exit 0, no changes.
	code, p, text = diff(t, ns, v1)
	g.Expect(code).To(Equal(0))
	g.Expect(p.Changes).To(BeFalse())
	g.Expect(p.Collectors[0].Exists).To(BeTrue())
	for _, o := range p.Collectors[0].Objects {
		g.Expect(o.Action).To(Equal(plan.Unchanged), "%s %s: %+v", o.Kind, o.Name, o.Changes)
	}
	g.Expect(text).To(ContainSubstring("No changes"))

	// (a) A configuration change: a new ConfigMap, and the Deployment's pods roll for the config.
	v2 := v1
	v2.verbosity = "detailed"
	code, p, text = diff(t, ns, v2)
	g.Expect(code).To(Equal(2))
	dep := only(t, byKind(p, "Deployment"), plan.Update)
	g.Expect(dep.Rollout).NotTo(BeNil())
	g.Expect(dep.Rollout.Rolls).To(BeTrue())
	g.Expect(dep.Rollout.Reasons).To(Equal([]string{"config"}))
	newConfig := only(t, byKind(p, "ConfigMap"), plan.Create)
	g.Expect(byKind(p, "Service")).To(HaveEach(HaveField("Action", plan.Unchanged)))
	g.Expect(text).To(ContainSubstring("pods roll: config"))
	var plannedHash any
	for _, ch := range dep.Changes {
		if strings.Contains(ch.Path, manifestutils.ConfigHashAnnotation) {
			plannedHash = ch.New
		}
	}
	g.Expect(plannedHash).NotTo(BeNil(), "the plan names the new config hash")

	before := deployment(t, ns)
	applyCollector(t, ns, v2)
	after := deployment(t, ns)
	g.Expect(after.Spec.Template.Annotations[manifestutils.ConfigHashAnnotation]).To(Equal(plannedHash))
	g.Expect(after.Generation).To(BeNumerically(">", before.Generation), "the pod template changed")
	g.Expect(configMapNames(t, ns)).To(ContainElement(newConfig.Name))
	code, _, _ = diff(t, ns, v2)
	g.Expect(code).To(Equal(0))

	// (b) A Service-only change: the Services change, the Deployment does not, no pods roll.
	v3 := v2
	v3.affinity = "ClientIP"
	code, p, text = diff(t, ns, v3)
	g.Expect(code).To(Equal(2))
	g.Expect(byKind(p, "Deployment")).To(HaveEach(HaveField("Action", plan.Unchanged)))
	g.Expect(byKind(p, "ConfigMap")).To(HaveEach(HaveField("Action", plan.Unchanged)))
	svc := byKind(p, "Service")
	g.Expect(svc).To(ContainElement(And(HaveField("Action", plan.Update), HaveField("Name", "planned-collector"))))
	for _, o := range svc {
		if o.Action == plan.Update {
			g.Expect(o.Changes).To(ContainElement(HaveField("Path", "spec.sessionAffinity")))
		}
	}
	g.Expect(text).To(ContainSubstring("Changes: no pods roll."))

	before = deployment(t, ns)
	applyCollector(t, ns, v3)
	g.Expect(deployment(t, ns).Generation).To(Equal(before.Generation), "the Deployment was not written")
	live := &corev1.Service{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned-collector"}, live)).To(Succeed())
	g.Expect(live.Spec.SessionAffinity).To(Equal(corev1.ServiceAffinityClientIP))
	code, _, _ = diff(t, ns, v3)
	g.Expect(code).To(Equal(0))

	// Pruning: configVersions 1 keeps one old ConfigMap besides the current one. A ConfigMap with
	// the operator's labels that no collector owns is never listed.
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planned-collector-stray", Namespace: ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator", "app.kubernetes.io/instance": ns + ".planned"}}}
	g.Expect(k8s.Create(ctx, stray)).To(Succeed())
	v4 := v3
	v4.verbosity = "normal"
	v4.configVersions = 1
	code, p, _ = diff(t, ns, v4)
	g.Expect(code).To(Equal(2))
	deleted := []string{}
	for _, o := range byKind(p, "ConfigMap") {
		if o.Action == plan.Delete {
			deleted = append(deleted, o.Name)
		}
	}
	g.Expect(deleted).To(HaveLen(1), "v1's ConfigMap: v3's stays as the one kept version")
	g.Expect(deleted).NotTo(ContainElement(stray.Name))
	applyCollector(t, ns, v4)
	names := configMapNames(t, ns)
	g.Expect(names).NotTo(ContainElement(deleted[0]), "the operator pruned what was planned")
	g.Expect(names).To(ContainElement(stray.Name))
	code, _, _ = diff(t, ns, v4)
	g.Expect(code).To(Equal(0))
}

func deployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "planned-collector"}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

func configMapNames(t *testing.T, ns string) []string {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	return names
}

// TestSomeoneElsesObjectIsAnError: an object under a name the collector generates that the
// collector does not own would stall it (OwnershipConflict): the plan says so and exits 1.
func TestSomeoneElsesObjectIsAnError(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := "plan-foreign"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "planned-collector", Namespace: ns}})).To(Succeed())
	file := filepath.Join(t.TempDir(), "collector.yaml")
	g.Expect(os.WriteFile(file, []byte(spec{verbosity: "basic", affinity: "None", configVersions: 3}.yaml(ns)), 0o600)).To(Succeed())
	var out, errOut bytes.Buffer
	code := render.Main([]string{"--diff", "-f", file, "--kubeconfig", reviewerKubeconfig}, nil, &out, &errOut)
	g.Expect(code).To(Equal(1), out.String())
	g.Expect(errOut.String()).To(ContainSubstring("ServiceAccount " + ns + "/planned-collector exists and is not this collector's"))
	g.Expect(errOut.String()).To(ContainSubstring("OwnershipConflict"))
}
