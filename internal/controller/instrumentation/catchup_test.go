package instrumentation_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	ctrlinst "github.com/otelop/otelop/internal/controller/instrumentation"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

var nsCounter atomic.Int32

func newNamespace(t testing.TB, ann map[string]string) string {
	t.Helper()
	name := fmt.Sprintf("catchup-%d", nsCounter.Add(1))
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// newInstrumentation creates an Instrumentation, deleted when the test ends (so that later tests
// see no left-over work).
func newInstrumentation(t *testing.T, ns, name string, ann map[string]string) *v1alpha1.Instrumentation {
	t.Helper()
	in := &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann}}
	in.Spec.Exporter.Endpoint = "http://collector:4318"
	if err := k8s.Create(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), in) })
	return in
}

func javaRecord(ns, name string, gen int64) map[string]string {
	return map[string]string{inst.InjectedAnnotation: inst.FormatInjected([]inst.Injected{
		{Language: inst.Java, Instrumentation: types.NamespacedName{Namespace: ns, Name: name}, Generation: gen}})}
}

func template(name string, ann map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: ann},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
	}
}

// pod creates a pod controlled by owner (there is no controller-manager in envtest: the test
// plays the ReplicaSet, StatefulSet and DaemonSet controllers).
func pod(t *testing.T, owner client.Object, kind, name string, ann, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name, Annotations: ann, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
			Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}}}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// deployment creates a settled Deployment at revision 1 with a ReplicaSet and one pod per entry
// of pods (each entry is the pod's annotations).
func deployment(t *testing.T, ns, name string, tmplAnn map[string]string, pods ...map[string]string) *appsv1.Deployment {
	t.Helper()
	ctx := context.Background()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{ctrlinst.DeploymentRevisionAnnotation: "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(len(pods))),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: template(name, tmplAnn)},
	}
	if err := k8s.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	settleDeployment(t, d, int32(len(pods)))
	rs := replicaSet(t, d, "1")
	for i, ann := range pods {
		pod(t, rs, "ReplicaSet", fmt.Sprintf("%s-1-%d", name, i), ann, map[string]string{"app": name})
	}
	return d
}

func replicaSet(t *testing.T, d *appsv1.Deployment, revision string) *appsv1.ReplicaSet {
	t.Helper()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-" + revision,
		Annotations:     map[string]string{ctrlinst.DeploymentRevisionAnnotation: revision},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}
	if err := k8s.Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// settleDeployment writes the status of a finished rollout of d's current generation.
func settleDeployment(t *testing.T, d *appsv1.Deployment, replicas int32) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas,
		ReadyReplicas: replicas, AvailableReplicas: replicas}
	if err := k8s.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
}

func statefulSet(t *testing.T, ns, name string, tmplAnn map[string]string, podAnn map[string]string) *appsv1.StatefulSet {
	t.Helper()
	ctx := context.Background()
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name, tmplAnn)}}
	if err := k8s.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1,
		AvailableReplicas: 1, CurrentRevision: name + "-r1", UpdateRevision: name + "-r1"}
	if err := k8s.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	pod(t, s, "StatefulSet", name+"-0", podAnn, map[string]string{"app": name, appsv1.ControllerRevisionHashLabelKey: name + "-r1"})
	return s
}

func daemonSet(t *testing.T, ns, name string, tmplAnn map[string]string, podAnn map[string]string) *appsv1.DaemonSet {
	t.Helper()
	ctx := context.Background()
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: template(name, tmplAnn)}}
	if err := k8s.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1,
		UpdatedNumberScheduled: 1, NumberReady: 1, NumberAvailable: 1}
	if err := k8s.Status().Update(ctx, ds); err != nil {
		t.Fatal(err)
	}
	pod(t, ds, "DaemonSet", name+"-node1", podAnn, map[string]string{"app": name})
	return ds
}

func workloads(g Gomega, ns, name string) *v1alpha1.InstrumentationWorkloads {
	in := &v1alpha1.Instrumentation{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, in)).To(Succeed())
	if in.Status.Workloads == nil {
		return &v1alpha1.InstrumentationWorkloads{Instrumented: -1, Pending: -1} // not reported yet
	}
	return in.Status.Workloads
}

// events returns the Events with reason about the Instrumentation ns/name.
func events(g Gomega, ns, name, reason string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Instrumentation" && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func restartedAt(g Gomega, obj client.Object) string {
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Template.Annotations[ctrlinst.RestartedAtAnnotation]
	case *appsv1.StatefulSet:
		return o.Spec.Template.Annotations[ctrlinst.RestartedAtAnnotation]
	case *appsv1.DaemonSet:
		return o.Spec.Template.Annotations[ctrlinst.RestartedAtAnnotation]
	}
	return ""
}

func setAnnotations(t *testing.T, obj client.Object, ann map[string]string) {
	t.Helper()
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range ann {
		a[k] = v
	}
	obj.SetAnnotations(a)
	if err := k8s.Patch(context.Background(), obj, patch); err != nil {
		t.Fatal(err)
	}
}

// TestReportsWorkloadsThatMissedTheirInstrumentation: workloads created before their
// Instrumentation are reported pending (with a Warning Event, once), become instrumented when
// their pods carry the record, and pending again ("Outdated") when the Instrumentation changes.
// Without the opt-in nothing is restarted; a workload that opts out is never counted.
func TestReportsWorkloadsThatMissedTheirInstrumentation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, map[string]string{inst.InjectAnnotation(inst.Java): "true"})
	java := map[string]string{inst.InjectAnnotation(inst.Java): "true"}
	web := deployment(t, ns, "web", java, nil, nil)
	plain := deployment(t, ns, "plain", map[string]string{inst.InjectAnnotation(inst.Java): "false"}, nil)
	db := statefulSet(t, ns, "db", nil, javaRecord(ns, "instr", 1)) // the namespace asks; admitted with it
	agent := daemonSet(t, ns, "agent", nil, nil)

	in := newInstrumentation(t, ns, "instr", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(workloads(g, ns, "instr")).To(Equal(&v1alpha1.InstrumentationWorkloads{Instrumented: 1, Pending: 2,
			PendingWorkloads: []v1alpha1.PendingWorkload{
				{Kind: "DaemonSet", Namespace: ns, Name: "agent", Reason: ctrlinst.ReasonNotInjected},
				{Kind: "Deployment", Namespace: ns, Name: "web", Reason: ctrlinst.ReasonNotInjected},
			}}))
		g.Expect(events(g, ns, "instr", ctrlinst.EventWorkloadsPending)).To(HaveLen(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	ev := events(g, ns, "instr", ctrlinst.EventWorkloadsPending)[0]
	g.Expect(ev.Type).To(Equal("Warning"))
	g.Expect(ev.Note).To(ContainSubstring("Deployment " + ns + "/web (NotInjected)"))

	// Several scans later: still one Event, and no workload was touched (no opt-in).
	time.Sleep(3 * interval)
	g.Expect(events(g, ns, "instr", ctrlinst.EventWorkloadsPending)).To(HaveLen(1))
	for _, o := range []client.Object{web, plain, db, agent} {
		g.Expect(restartedAt(g, o)).To(BeEmpty(), o.GetName())
	}

	// The pods get the record (as if the workloads had been restarted by hand).
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	for i := range pods.Items {
		if pods.Items[i].Labels["app"] != "plain" {
			setAnnotations(t, &pods.Items[i], javaRecord(ns, "instr", 1))
		}
	}
	g.Eventually(func(g Gomega) {
		g.Expect(workloads(g, ns, "instr")).To(Equal(&v1alpha1.InstrumentationWorkloads{Instrumented: 3}))
		g.Expect(events(g, ns, "instr", ctrlinst.EventWorkloadsInstrumented)).To(HaveLen(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The Instrumentation changes: every pod carries an older generation.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), in)).To(Succeed())
	in.Spec.Exporter.Endpoint = "http://other:4318"
	g.Expect(k8s.Update(ctx, in)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := workloads(g, ns, "instr")
		g.Expect(st.Pending).To(Equal(int32(3)))
		g.Expect(st.PendingWorkloads).To(HaveEach(HaveField("Reason", ctrlinst.ReasonOutdated)))
		g.Expect(events(g, ns, "instr", ctrlinst.EventWorkloadsPending)).To(HaveLen(2))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for _, o := range []client.Object{web, plain, db, agent} {
		g.Expect(restartedAt(g, o)).To(BeEmpty(), o.GetName())
	}
}

// TestOptInRestartsPendingWorkloadsAtTheRateLimit: with the annotation, pending workloads are
// restarted like `kubectl rollout restart`, at most restartsPerMinute a minute, never one that is
// rolling out or that does not ask for instrumentation, and never twice for the same record.
func TestOptInRestartsPendingWorkloadsAtTheRateLimit(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	java := map[string]string{inst.InjectAnnotation(inst.Java): "instr"}
	const pending = restartsPerMinute + 2
	var deps []*appsv1.Deployment
	for i := range pending {
		deps = append(deps, deployment(t, ns, fmt.Sprintf("web-%d", i), java, nil))
	}
	rolling := deployment(t, ns, "rolling", java, nil)
	rolling.Status.UpdatedReplicas = 0
	g.Expect(k8s.Status().Update(ctx, rolling)).To(Succeed())
	plain := deployment(t, ns, "plain", nil, nil)

	in := newInstrumentation(t, ns, "instr", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(workloads(g, ns, "instr").Pending).To(Equal(int32(pending + 1)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	time.Sleep(2 * interval)
	restarted := func(g Gomega) int {
		n := 0
		for _, d := range deps {
			if restartedAt(g, d) != "" {
				n++
			}
		}
		return n
	}
	g.Expect(restarted(g)).To(BeZero(), "no restart without the opt-in")

	setAnnotations(t, in, map[string]string{ctrlinst.RestartOptInAnnotation: "true"})
	g.Eventually(restarted).WithTimeout(timeout).WithPolling(poll).Should(Equal(restartsPerMinute), "the burst")
	g.Consistently(restarted).WithTimeout(5*time.Second).WithPolling(poll).Should(Equal(restartsPerMinute), "then one a 10 s")
	g.Eventually(restarted).WithTimeout(15 * time.Second).WithPolling(poll).Should(Equal(restartsPerMinute + 1))
	g.Expect(restartedAt(g, rolling)).To(BeEmpty(), "rolling out")
	g.Expect(restartedAt(g, plain)).To(BeEmpty(), "does not ask for instrumentation")
	g.Eventually(func(g Gomega) int {
		return len(events(g, ns, "instr", ctrlinst.EventWorkloadRestarted))
	}).WithTimeout(timeout).Should(BeNumerically(">=", restartsPerMinute+1), "one Normal Event per restart")

	// The first restarted one: the template says what it was for, like kubectl's restart.
	d := deps[0]
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(ctrlinst.RestartedForAnnotation, "java="+ns+"/instr@1"))
	at := d.Spec.Template.Annotations[ctrlinst.RestartedAtAnnotation]
	_, err := time.Parse(time.RFC3339, at)
	g.Expect(err).NotTo(HaveOccurred())

	// Its rollout finishes (we play the Deployment controller): revision 2, a pod with the record.
	d.Annotations[ctrlinst.DeploymentRevisionAnnotation] = "2"
	g.Expect(k8s.Update(ctx, d)).To(Succeed())
	pod(t, replicaSet(t, d, "2"), "ReplicaSet", d.Name+"-2-0", javaRecord(ns, "instr", 1), map[string]string{"app": d.Name})
	settleDeployment(t, d, 1)
	// The second one's rollout finishes without the record (the webhook was down again).
	d1 := deps[1]
	settleDeployment(t, d1, 1)
	g.Eventually(func(g Gomega) {
		st := workloads(g, ns, "instr")
		g.Expect(st.Instrumented).To(Equal(int32(1)))
		g.Expect(st.PendingWorkloads).To(ContainElement(v1alpha1.PendingWorkload{Kind: "Deployment", Namespace: ns, Name: d1.Name,
			Reason: ctrlinst.ReasonRestartDidNotInject}))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	at1 := restartedAt(g, d1)
	g.Consistently(func(g Gomega) string { return restartedAt(g, d1) }).WithTimeout(3*interval).Should(Equal(at1),
		"never restarted twice for the same record")
}

// TestOptOutIsNotAnOptIn: an Instrumentation annotated false is never acted on (the annotation
// is read as false, not as "set").
func TestOptOutIsNotAnOptIn(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, nil)
	d := deployment(t, ns, "web", map[string]string{inst.InjectAnnotation(inst.Java): "true"}, nil)
	newInstrumentation(t, ns, "instr", map[string]string{ctrlinst.RestartOptInAnnotation: "false"})
	g.Eventually(func(g Gomega) int32 { return workloads(g, ns, "instr").Pending }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(1)))
	time.Sleep(3 * interval)
	g.Expect(restartedAt(g, d)).To(BeEmpty())
}

// TestScannerReadsEveryPage runs the scanner alone against the API server with one object per
// page: every workload, ReplicaSet and pod is seen; --watch-namespace reads only the namespaces
// named (by get, not list).
func TestScannerReadsEveryPage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	asking := newNamespace(t, map[string]string{inst.InjectAnnotation(inst.Python): "obs/x"})
	newNamespace(t, nil) // neither an Instrumentation nor an annotation: not scanned
	java := map[string]string{inst.InjectAnnotation(inst.Java): "instr"}
	for i := range 3 {
		deployment(t, ns, fmt.Sprintf("web-%d", i), java, nil, javaRecord(ns, "instr", 1))
	}
	statefulSet(t, ns, "db", java, nil)
	daemonSet(t, ns, "agent", java, javaRecord(ns, "instr", 1))
	ix := ctrlinst.NewIndex([]v1alpha1.Instrumentation{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "instr", Generation: 1}}})
	s := ctrlinst.Scanner{Reader: k8s, Apps: apps, PageSize: 1}

	stats := &ctrlinst.Stats{}
	nss, err := s.Namespaces(ctx, ix, nil, stats)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nss).To(HaveKey(ns))
	g.Expect(nss).To(HaveKey(asking))
	g.Expect(stats.Requests).To(BeNumerically(">", 3), "one namespace per page")

	stats = &ctrlinst.Stats{}
	nss, err = s.Namespaces(ctx, ix, []string{ns, "absent"}, stats)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nss).To(HaveLen(1))
	g.Expect(nss).To(HaveKey(ns))

	stats = &ctrlinst.Stats{}
	ws, err := s.Namespace(ctx, ns, nss[ns], ix, stats)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stats.Pods).To(Equal(8))
	g.Expect(stats.ReplicaSets).To(Equal(3))
	sum := ctrlinst.Summarize([]types.NamespacedName{{Namespace: ns, Name: "instr"}}, ws)[types.NamespacedName{Namespace: ns, Name: "instr"}]
	g.Expect(sum.Instrumented).To(Equal(1))
	g.Expect(sum.Pending).To(HaveLen(4))
	g.Expect(stats.Requests).To(BeNumerically(">=", 3+1+1+3+8), "one object per page")
}
