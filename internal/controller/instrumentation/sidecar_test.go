package instrumentation

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/sidecar"
)

func sidecarCollector(ns, name string, gen int64, mode v1beta1.Mode, ann map[string]string) v1beta1.OpenTelemetryCollector {
	c := v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: gen, Annotations: ann}}
	c.Spec.Mode = mode
	return c
}

func TestResolveSidecar(t *testing.T) {
	ix := NewSidecarIndex([]v1beta1.OpenTelemetryCollector{
		sidecarCollector("apps", "side", 4, v1beta1.ModeSidecar, nil),
		sidecarCollector("apps", "gateway", 9, v1beta1.ModeDeployment, nil),
		sidecarCollector("obs", "shared", 2, v1beta1.ModeSidecar, map[string]string{sidecar.AllowedNamespacesAnnotation: "apps"}),
		sidecarCollector("obs", "other", 1, v1beta1.ModeSidecar, nil),
	})
	side := types.NamespacedName{Namespace: "apps", Name: "side"}
	shared := types.NamespacedName{Namespace: "obs", Name: "shared"}
	cases := []struct {
		value, ns string
		key       types.NamespacedName
		gen       int64
		ok        bool
	}{
		{"true", "apps", side, 4, true}, // the deployment-mode collector does not count
		{" TRUE ", "apps", side, 4, true},
		{"true", "obs", types.NamespacedName{}, 0, false}, // two sidecar collectors: the webhook picks none
		{"side", "apps", side, 4, true},
		{"gateway", "apps", types.NamespacedName{}, 0, false}, // not in sidecar mode
		{"obs/shared", "apps", shared, 2, true},
		{"obs/other", "apps", types.NamespacedName{}, 0, false}, // does not allow apps
		{"false", "apps", types.NamespacedName{}, 0, false},
		{"", "apps", types.NamespacedName{}, 0, false},
		{"missing", "apps", types.NamespacedName{}, 0, false},
	}
	for _, c := range cases {
		key, gen, ok := ix.ResolveSidecar(c.value, c.ns)
		if ok != c.ok || (ok && (key != c.key || gen != c.gen)) {
			t.Errorf("ResolveSidecar(%q, %q) = %v, %d, %v; want %v, %d, %v", c.value, c.ns, key, gen, ok, c.key, c.gen, c.ok)
		}
	}
}

// sidecarDeployment returns the sidecar view of a settled Deployment of apps asking for
// apps/side (generation 4) with tmplAnn added to its template, and one pod per entry of pods.
func sidecarDeployment(t *testing.T, tmplAnn map[string]string, nsAnn map[string]string, pods ...map[string]string) *Workload {
	t.Helper()
	ix := NewSidecarIndex([]v1beta1.OpenTelemetryCollector{sidecarCollector("apps", "side", 4, v1beta1.ModeSidecar, nil)})
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", UID: "web-uid", Generation: 1,
		Annotations: map[string]string{DeploymentRevisionAnnotation: "1"}},
		Spec:   appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tmplAnn}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}}
	w := withDeployment(sidecarView(nsAnn, ix)(KindDeployment, &d.ObjectMeta, &d.Spec.Template), d)
	if w == nil {
		return nil
	}
	for _, ann := range pods {
		w.Observe(ann, "1")
	}
	return w
}

func TestSidecarVerdicts(t *testing.T) {
	side := types.NamespacedName{Namespace: "apps", Name: "side"}
	ask := map[string]string{sidecar.InjectAnnotation: "true"}
	gen := func(g string) map[string]string {
		return map[string]string{sidecar.GenerationAnnotation: "apps/side@" + g}
	}
	cases := []struct {
		name   string
		tmpl   map[string]string
		nsAnn  map[string]string
		pods   []map[string]string
		want   string
		follow bool
	}{
		{"no sidecar (webhook down)", ask, nil, []map[string]string{nil}, ReasonNotInjected, true},
		{"older generation", ask, nil, []map[string]string{gen("3")}, ReasonOutdated, true},
		{"current", ask, nil, []map[string]string{gen("4")}, "", true},
		{"one of two outdated", ask, nil, []map[string]string{gen("4"), gen("2")}, ReasonOutdated, true},
		{"unreadable record", ask, nil, []map[string]string{{sidecar.GenerationAnnotation: "garbage"}}, ReasonNotInjected, true},
		{"asked by the namespace", nil, ask, []map[string]string{gen("4")}, "", true},
		{"the pod says false", map[string]string{sidecar.InjectAnnotation: "false"}, ask, nil, "", false},
		{"no request", nil, nil, nil, "", false},
		{"restarted for this generation, still none", map[string]string{sidecar.InjectAnnotation: "side",
			SidecarRestartedForAnnotation: "sidecar=apps/side@4"}, nil, []map[string]string{nil}, ReasonRestartDidNotInject, true},
		{"the Instrumentation path's restart record does not count", map[string]string{sidecar.InjectAnnotation: "side",
			RestartedForAnnotation: "sidecar=apps/side@4"}, nil, []map[string]string{nil}, ReasonNotInjected, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			w := sidecarDeployment(t, c.tmpl, c.nsAnn, c.pods...)
			if !c.follow {
				g.Expect(w).To(BeNil())
				return
			}
			g.Expect(w).NotTo(BeNil())
			g.Expect(w.Verdicts()).To(Equal(map[types.NamespacedName]string{side: c.want}))
		})
	}
}

func TestSidecarRestartPatchUsesItsOwnRecord(t *testing.T) {
	g := NewWithT(t)
	w := sidecarDeployment(t, map[string]string{sidecar.InjectAnnotation: "true"}, nil, nil)
	body, err := RestartPatch(w, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	g.Expect(err).NotTo(HaveOccurred())
	var patch struct {
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"template"`
		} `json:"spec"`
	}
	g.Expect(json.Unmarshal(body, &patch)).To(Succeed())
	g.Expect(patch.Spec.Template.Metadata.Annotations).To(Equal(map[string]string{
		RestartedAtAnnotation:         "2026-01-02T03:04:05Z",
		SidecarRestartedForAnnotation: "sidecar=apps/side@4",
	}))
	// Once restarted for this generation, it is no candidate any more (no loop).
	optIn := func(*Workload, types.NamespacedName) bool { return true }
	g.Expect(RestartCandidates([]*Workload{w}, optIn)).To(HaveLen(1))
	w.RestartedFor = w.Record()
	g.Expect(RestartCandidates([]*Workload{w}, optIn)).To(BeEmpty())
}

func TestSidecarStatusAndTransition(t *testing.T) {
	g := NewWithT(t)
	outdated := sidecarDeployment(t, map[string]string{sidecar.InjectAnnotation: "true"}, nil, nil)
	side := types.NamespacedName{Namespace: "apps", Name: "side"}
	st := SidecarStatus(Summarize([]types.NamespacedName{side}, []*Workload{outdated})[side])
	g.Expect(st).To(Equal(&v1beta1.SidecarWorkloads{Outdated: 1, OutdatedWorkloads: []v1beta1.OutdatedWorkload{
		{Kind: KindDeployment, Namespace: "apps", Name: "web", Reason: ReasonNotInjected}}}))

	ev := SidecarTransition(nil, st)
	g.Expect(ev).NotTo(BeNil())
	g.Expect(ev.Type).To(Equal("Warning"))
	g.Expect(ev.Reason).To(Equal(EventSidecarsOutdated))
	g.Expect(ev.Note).To(ContainSubstring("Deployment apps/web (NotInjected)"))
	g.Expect(ev.Note).To(ContainSubstring(RestartOptInAnnotation + "=true"))
	g.Expect(SidecarTransition(st, st)).To(BeNil(), "no Event while nothing changes")

	current := &v1beta1.SidecarWorkloads{Current: 1}
	ev = SidecarTransition(st, current)
	g.Expect(ev).NotTo(BeNil())
	g.Expect(ev.Type).To(Equal("Normal"))
	g.Expect(ev.Reason).To(Equal(EventSidecarsCurrent))
	g.Expect(SidecarTransition(nil, current)).To(BeNil(), "current from the start is no transition")

	many := &v1beta1.SidecarWorkloads{Outdated: 400}
	for i := 0; i < MaxPendingNames; i++ {
		many.OutdatedWorkloads = append(many.OutdatedWorkloads, v1beta1.OutdatedWorkload{Kind: KindDeployment, Namespace: "apps",
			Name: strings.Repeat("x", 90), Reason: ReasonOutdated})
	}
	g.Expect(len(SidecarTransition(nil, many).Note)).To(BeNumerically("<=", 1000))
}
