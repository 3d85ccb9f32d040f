package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1alpha1"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

var (
	appsA = types.NamespacedName{Namespace: "apps", Name: "a"}
	appsB = types.NamespacedName{Namespace: "apps", Name: "b"}
	obsX  = types.NamespacedName{Namespace: "obs", Name: "x"}
)

func index(gens map[types.NamespacedName]int64) Index {
	var list []v1alpha1.Instrumentation
	for k, g := range gens {
		list = append(list, v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, Generation: g}})
	}
	return NewIndex(list)
}

func TestResolve(t *testing.T) {
	one := index(map[types.NamespacedName]int64{appsA: 3, obsX: 1})
	two := index(map[types.NamespacedName]int64{appsA: 3, appsB: 5})
	consenting := func(allowed string) Index {
		return NewIndex([]v1alpha1.Instrumentation{{ObjectMeta: metav1.ObjectMeta{Namespace: obsX.Namespace, Name: obsX.Name, Generation: 1,
			Annotations: map[string]string{inst.AllowedNamespacesAnnotation: allowed}}}})
	}
	cases := []struct {
		name  string
		ix    Index
		value string
		ns    string
		want  types.NamespacedName
		gen   int64
		ok    bool
	}{
		{"true takes the only one of the namespace", one, "true", "apps", appsA, 3, true},
		{"TRUE in any case", one, "TRUE", "apps", appsA, 3, true},
		{"true with none in the namespace", one, "true", "web", types.NamespacedName{}, 0, false},
		{"true with two is ambiguous", two, "true", "apps", types.NamespacedName{}, 0, false},
		{"a name in the pod's namespace", two, "b", "apps", appsB, 5, true},
		{"namespace/name elsewhere without its consent", one, "obs/x", "apps", types.NamespacedName{}, 0, false},
		{"namespace/name elsewhere, consented", consenting("web, apps"), "obs/x", "apps", obsX, 1, true},
		{"namespace/name elsewhere, consented to all", consenting("*"), "obs/x", "apps", obsX, 1, true},
		{"namespace/name elsewhere, consented to others", consenting("web,apps2"), "obs/x", "apps", types.NamespacedName{}, 0, false},
		{"namespace/name of its own namespace", one, "obs/x", "obs", obsX, 1, true},
		{"a missing name", one, "nope", "apps", types.NamespacedName{}, 0, false},
		{"a malformed value", one, "a/b/c", "apps", types.NamespacedName{}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			key, gen, ok := c.ix.Resolve(inst.Request{Language: inst.Java, Value: c.value}, c.ns)
			g.Expect(ok).To(Equal(c.ok))
			if c.ok {
				g.Expect(key).To(Equal(c.want))
				g.Expect(gen).To(Equal(c.gen))
			}
		})
	}
}

// deployment is a settled Deployment in apps whose template carries ann.
func deployment(name string, ann map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID("uid-" + name), Generation: 2,
			Annotations: map[string]string{DeploymentRevisionAnnotation: "4"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2, ReadyReplicas: 2},
	}
}

func record(list ...inst.Injected) map[string]string {
	return map[string]string{inst.InjectedAnnotation: inst.FormatInjected(list)}
}

func TestFromDeploymentResolvesTemplateAndNamespace(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex([]v1alpha1.Instrumentation{
		{ObjectMeta: metav1.ObjectMeta{Namespace: appsA.Namespace, Name: appsA.Name, Generation: 3}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: obsX.Namespace, Name: obsX.Name, Generation: 7,
			Annotations: map[string]string{inst.AllowedNamespacesAnnotation: "apps"}}},
	})
	d := deployment("web", map[string]string{inst.InjectAnnotation(inst.Python): "obs/x"})
	w := FromDeployment(d, map[string]string{inst.InjectAnnotation(inst.Java): "true"}, ix, nil)
	g.Expect(w).NotTo(BeNil())
	g.Expect(w.Want).To(Equal([]inst.Injected{
		{Language: inst.Java, Instrumentation: appsA, Generation: 3},
		{Language: inst.Python, Instrumentation: obsX, Generation: 7},
	}))
	g.Expect(w.Record()).To(Equal("java=apps/a@3,python=obs/x@7"))
	g.Expect(w.Revision).To(Equal("4"))
	g.Expect(w.RollingOut).To(BeFalse())

	// The pod template's "false" wins over the namespace; nothing else asked: not followed.
	d = deployment("off", map[string]string{inst.InjectAnnotation(inst.Java): "false"})
	g.Expect(FromDeployment(d, map[string]string{inst.InjectAnnotation(inst.Java): "true"}, ix, nil)).To(BeNil())
	// An Instrumentation that does not exist serves nothing.
	d = deployment("missing", map[string]string{inst.InjectAnnotation(inst.Java): "nope"})
	g.Expect(FromDeployment(d, nil, ix, nil)).To(BeNil())
	// A disabled language is not expected on pods.
	d = deployment("go", map[string]string{inst.InjectAnnotation(inst.Go): "true"})
	g.Expect(FromDeployment(d, nil, ix, func(l inst.Language) bool { return l != inst.Go })).To(BeNil())
	// No annotation anywhere: not followed.
	g.Expect(FromDeployment(deployment("plain", nil), nil, ix, nil)).To(BeNil())
}

func TestRollingOutAndRestartability(t *testing.T) {
	g := NewWithT(t)
	ix := index(map[types.NamespacedName]int64{appsA: 1})
	ann := map[string]string{inst.InjectAnnotation(inst.Java): "a"}

	d := deployment("web", ann)
	d.Generation = 3 // spec changed, not yet observed
	g.Expect(FromDeployment(d, nil, ix, nil).RollingOut).To(BeTrue())
	d = deployment("web", ann)
	d.Status.Replicas = 3 // an old replica left
	g.Expect(FromDeployment(d, nil, ix, nil).RollingOut).To(BeTrue())
	d = deployment("web", ann)
	d.Spec.Paused = true
	g.Expect(FromDeployment(d, nil, ix, nil).NoRestart).To(Equal("paused"))

	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db", Generation: 1},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}}
	w := FromStatefulSet(s, nil, ix, nil)
	g.Expect(w.RollingOut).To(BeFalse())
	g.Expect(w.Revision).To(Equal("r1"))
	g.Expect(w.NoRestart).NotTo(BeEmpty())

	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "agent", Generation: 1},
		Spec:   appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2}}
	g.Expect(FromDaemonSet(ds, nil, ix, nil).RollingOut).To(BeTrue())
}

func TestVerdicts(t *testing.T) {
	ix := index(map[types.NamespacedName]int64{appsA: 3, appsB: 2})
	ann := map[string]string{inst.InjectAnnotation(inst.Java): "a", inst.InjectAnnotation(inst.Python): "b"}
	javaA := func(gen int64) inst.Injected {
		return inst.Injected{Language: inst.Java, Instrumentation: appsA, Generation: gen}
	}
	pyB := inst.Injected{Language: inst.Python, Instrumentation: appsB, Generation: 2}
	type pod struct {
		ann      map[string]string
		revision string
	}
	cases := []struct {
		name   string
		change func(*appsv1.Deployment)
		pods   []pod
		want   map[types.NamespacedName]string
	}{
		{"every pod carries both", nil, []pod{{record(javaA(3), pyB), "4"}, {record(javaA(3), pyB), "4"}},
			map[types.NamespacedName]string{appsA: "", appsB: ""}},
		{"no pods: no verdict", nil, nil, map[types.NamespacedName]string{}},
		{"one pod without any record", nil, []pod{{record(javaA(3), pyB), "4"}, {nil, "4"}},
			map[types.NamespacedName]string{appsA: ReasonNotInjected, appsB: ReasonNotInjected}},
		{"an older generation of a", nil, []pod{{record(javaA(2), pyB), "4"}},
			map[types.NamespacedName]string{appsA: ReasonOutdated, appsB: ""}},
		{"a newer generation than the cache knows counts as current", nil, []pod{{record(javaA(4), pyB), "4"}},
			map[types.NamespacedName]string{appsA: "", appsB: ""}},
		{"java from another Instrumentation", nil, []pod{{record(inst.Injected{Language: inst.Java, Instrumentation: appsB, Generation: 2}, pyB), "4"}},
			map[types.NamespacedName]string{appsA: ReasonNotInjected, appsB: ""}},
		{"an unreadable record is no record", nil, []pod{{map[string]string{inst.InjectedAnnotation: "garbage"}, "4"}},
			map[types.NamespacedName]string{appsA: ReasonNotInjected, appsB: ReasonNotInjected}},
		{"pods of an old revision are ignored when settled", nil, []pod{{nil, "3"}, {record(javaA(3), pyB), "4"}},
			map[types.NamespacedName]string{appsA: "", appsB: ""}},
		{"while rolling out every pod counts", func(d *appsv1.Deployment) { d.Status.Replicas = 3 },
			[]pod{{nil, "3"}, {record(javaA(3), pyB), "4"}},
			map[types.NamespacedName]string{appsA: ReasonRollingOut, appsB: ReasonRollingOut}},
		{"restarted for this record and still missing", func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations[RestartedForAnnotation] = "java=apps/a@3,python=apps/b@2"
		}, []pod{{nil, "4"}},
			map[types.NamespacedName]string{appsA: ReasonRestartDidNotInject, appsB: ReasonRestartDidNotInject}},
		{"restarted for an older record", func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations[RestartedForAnnotation] = "java=apps/a@2,python=apps/b@2"
		}, []pod{{record(javaA(2), pyB), "4"}},
			map[types.NamespacedName]string{appsA: ReasonOutdated, appsB: ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			a := map[string]string{}
			for k, v := range ann {
				a[k] = v
			}
			d := deployment("web", a)
			if c.change != nil {
				c.change(d)
			}
			w := FromDeployment(d, nil, ix, nil)
			for _, p := range c.pods {
				w.Observe(p.ann, p.revision)
			}
			g.Expect(w.Verdicts()).To(Equal(c.want))
		})
	}
}
