package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/plan"
	"github.com/otelop/otelop/internal/render"
)

// plannedCollector is the collector of TestRenderDiffPlansRollouts: %s namespace, %s the
// Service's sessionAffinity, %s the debug exporter's verbosity.
const plannedCollector = `apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: planned
  namespace: %s
spec:
  replicas: 2
  sessionAffinity: %s
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug:
        verbosity: %s
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`

// TestRenderDiffPlansRollouts: `render --diff`, run by a user who may only read, says which
// change rolls the collector's pods and which does not, and the simulated cluster agrees: after
// the config change every pod is replaced, after the Service-only change none is. The input
// that was applied plans to no changes (exit 0) each time.
func TestRenderDiffPlansRollouts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	kubeconfig := readOnlyKubeconfig(t)
	manifest := func(affinity, verbosity string) string {
		return fmt.Sprintf(plannedCollector, ns, affinity, verbosity)
	}
	planOf := func(m string) (int, plan.Plan, string) {
		file := filepath.Join(t.TempDir(), "collector.yaml")
		g.Expect(os.WriteFile(file, []byte(m), 0o600)).To(Succeed())
		var out, text, errOut bytes.Buffer
		code := render.Main([]string{"--diff", "-f", file, "--kubeconfig", kubeconfig, "-o", "json"}, nil, &out, &errOut)
		g.Expect(code).NotTo(Equal(1), errOut.String())
		var p plan.Plan
		g.Expect(json.Unmarshal(out.Bytes(), &p)).To(Succeed())
		g.Expect(render.Main([]string{"--diff", "-f", file, "--kubeconfig", kubeconfig}, nil, &text, &errOut)).To(Equal(code))
		t.Logf("render --diff (exit %d):\n%s", code, text.String())
		return code, p, text.String()
	}
	apply := func(m string) {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(m), &u.Object)).To(Succeed())
		g.Eventually(func() error { // the webhook's certificate may still be injected
			return k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner("gitops"), client.ForceOwnership)
		}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
	}
	settled := func(want int) map[string]bool { // Ready with want pods, that generation reconciled
		var uids map[string]bool
		g.Eventually(func(g Gomega) {
			col := &v1beta1.OpenTelemetryCollector{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned"}, col)).To(Succeed())
			g.Expect(col.Status.ObservedGeneration).To(Equal(col.Generation))
			g.Expect(ready(g, ns, "planned").Status).To(Equal(metav1.ConditionTrue))
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
			uids = map[string]bool{}
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil {
					uids[string(p.UID)] = true
				}
			}
			g.Expect(uids).To(HaveLen(want))
		}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
		return uids
	}

	v1 := manifest("None", "basic")
	code, p, _ := planOf(v1)
	g.Expect(code).To(Equal(2))
	g.Expect(p.Collectors[0].Exists).To(BeFalse())
	g.Expect(p.Collectors[0].Objects).To(HaveEach(HaveField("Action", plan.Create)))
	apply(v1)
	pods := settled(2)
	code, _, text := planOf(v1)
	g.Expect(code).To(Equal(0), "the applied input plans to nothing (no false positive)")
	g.Expect(text).To(ContainSubstring("No changes"))

	// A config change: planned to roll the Deployment's pods for the config; they all roll.
	v2 := manifest("None", "detailed")
	code, p, text = planOf(v2)
	g.Expect(code).To(Equal(2))
	g.Expect(text).To(ContainSubstring("pods roll in Deployment " + ns + "/planned-collector (config)"))
	for _, o := range p.Collectors[0].Objects {
		if o.Kind == "Deployment" {
			g.Expect(o.Rollout).To(Equal(&plan.Rollout{Rolls: true, Reasons: []string{"config"}, Fields: o.Rollout.Fields}))
		}
	}
	apply(v2)
	g.Eventually(func(g Gomega) {
		now := settled(2)
		for uid := range now {
			g.Expect(pods).NotTo(HaveKey(uid), "every pod was replaced")
		}
		pods = now
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	code, _, _ = planOf(v2)
	g.Expect(code).To(Equal(0))

	// A Service-only change: planned without a roll; no pod is replaced.
	v3 := manifest("ClientIP", "detailed")
	code, p, text = planOf(v3)
	g.Expect(code).To(Equal(2))
	g.Expect(text).To(ContainSubstring("Changes: no pods roll."))
	for _, o := range p.Collectors[0].Objects {
		g.Expect(o.Rollout).To(BeNil(), "%s %s", o.Kind, o.Name)
	}
	dep := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned-collector"}, dep)).To(Succeed())
	generation := dep.Generation
	apply(v3)
	g.Eventually(func(g Gomega) {
		svc := &corev1.Service{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned-collector"}, svc)).To(Succeed())
		g.Expect(svc.Spec.SessionAffinity).To(Equal(corev1.ServiceAffinityClientIP))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	g.Expect(settled(2)).To(Equal(pods), "no pod was replaced")
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned-collector"}, dep)).To(Succeed())
	g.Expect(dep.Generation).To(Equal(generation))
	code, _, _ = planOf(v3)
	g.Expect(code).To(Equal(0))
}

// readOnlyKubeconfig issues a client certificate for a user who may get, list and watch
// everything and nothing more (a CI job planning pull requests), and returns its kubeconfig.
func readOnlyKubeconfig(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "plan-reader-"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if err := k8s.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: role.Name}},
	}
	if err := k8s.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	kubeconfig, _, _, err := cluster.IssueClient(role.Name, role.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
