package injectdiff

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/test/sidebyside"
	"github.com/otelop/otelop/test/simcluster"
	"github.com/otelop/otelop/test/upstreamop"
)

func TestMain(m *testing.M) {
	upstreamop.RunChildIfAsked()
	os.Exit(m.Run())
}

// caseLabel names the case on every pod (the same on both sides).
const caseLabel = "injectdiff.otelop.io/case"

// TestInjectionMatchesUpstream sends every case of cases through upstream's pod webhook and
// ours, with the same Instrumentations, and compares the admitted pods (and the defaulted
// Instrumentations) field by field against the table of expected differences.
func TestInjectionMatchesUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	started := time.Now()
	e := start(t, ctx)
	insts := e.createInputs()
	e.waitServed(insts)
	t.Logf("cluster, both operators and their Instrumentations ready in %s", time.Since(started).Round(100*time.Millisecond))

	var found []observed
	for _, in := range insts {
		found = append(found, e.compareInstrumentation(in)...)
	}
	for _, c := range cases {
		up, upErr := e.admit(c, sideUpstream)
		ours, ourErr := e.admit(c, sideOtelop)
		if upErr != nil || ourErr != nil {
			// A pod the API server refused (the webhook made it invalid) is compared by that alone.
			d := difference{Path: "admission", Upstream: admission(upErr), Ours: admission(ourErr)}
			if d.Upstream != d.Ours {
				found = append(found, observed{Case: c.name, Difference: d})
			}
			continue
		}
		for side, p := range map[string]*corev1.Pod{sideUpstream: up, sideOtelop: ours} {
			if got := instrumented(p, c.pod(side)); got == c.untouched {
				t.Errorf("%s: %s's webhook instrumented the pod: %v, want %v", c.name, side, got, !c.untouched)
			}
		}
		u, err := normalize(up)
		if err != nil {
			t.Fatal(err)
		}
		o, err := normalize(ours)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diff("", u, o) {
			found = append(found, observed{Case: c.name, Difference: d})
		}
		dump(t, c.name, u, o)
	}
	t.Logf("%d cases compared in %s; %d differences:\n%s", len(cases)+len(insts), time.Since(started).Round(100*time.Millisecond),
		len(found), sidebyside.Table(found))
	for _, msg := range check(found, expected) {
		t.Error(msg)
	}
}

// createInputs creates testdata/instrumentations.yaml in both sides' namespaces (retrying while
// an operator's Instrumentation webhooks are not served yet) and returns the objects as read
// from the file.
func (e *env) createInputs() []*unstructured.Unstructured {
	e.t.Helper()
	objs, err := simcluster.ReadManifestFile(filepath.Join("testdata", "instrumentations.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, side := range sides {
		for _, o := range objs {
			obj := o.DeepCopy()
			obj.SetNamespace(ns(side, o.GetNamespace()))
			err := wait.PollUntilContextTimeout(e.ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				return e.admin.Create(ctx, obj.DeepCopy()) == nil, nil
			})
			if err != nil {
				e.t.Fatalf("creating %s %s/%s: %v (last error: %v)\nupstream's operator:\n%s", obj.GetKind(), obj.GetNamespace(),
					obj.GetName(), err, e.admin.Create(e.ctx, obj.DeepCopy()), e.up.Tail(20))
			}
		}
	}
	var insts []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Instrumentation" {
			insts = append(insts, o)
		}
	}
	return insts
}

// waitServed waits until each side's pod webhook injects every Instrumentation (by name, into a
// dry-run pod of its namespace): the operators' caches have them all.
func (e *env) waitServed(insts []*unstructured.Unstructured) {
	e.t.Helper()
	for _, side := range sides {
		for _, in := range insts {
			probe := func() *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns(side, in.GetNamespace()), Name: "probe",
						Annotations: map[string]string{a("inject-python"): in.GetName()}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{app("app")}},
				}
			}
			var last error
			err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				p := probe()
				last = e.admin.Create(ctx, p, client.DryRunAll)
				return last == nil && instrumented(p, nil), nil
			})
			if err != nil {
				e.t.Fatalf("%s's pod webhook does not inject %s/%s: %v (last error: %v)\nupstream's operator:\n%s",
					side, in.GetNamespace(), in.GetName(), err, last, e.up.Tail(20))
			}
		}
	}
}

// compareInstrumentation compares an Instrumentation as each side's defaulting webhook stored
// it: its annotations, labels and spec.
func (e *env) compareInstrumentation(in *unstructured.Unstructured) []observed {
	e.t.Helper()
	var got [2]map[string]any
	for i, side := range sides {
		inst := &v1alpha1.Instrumentation{}
		if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: ns(side, in.GetNamespace()), Name: in.GetName()}, inst); err != nil {
			e.t.Fatal(err)
		}
		m, err := normalize(map[string]any{"metadata": map[string]any{"annotations": inst.Annotations, "labels": inst.Labels}, "spec": inst.Spec})
		if err != nil {
			e.t.Fatal(err)
		}
		got[i] = m
	}
	var out []observed
	for _, d := range diff("", got[0], got[1]) {
		out = append(out, observed{Case: "Instrumentation " + in.GetNamespace() + "/" + in.GetName(), Difference: d})
	}
	return out
}

// admit creates case c's pod in side's namespace (directly, or through its workload) and returns
// it as admitted, or the API server's refusal of a pod created directly.
func (e *env) admit(c podCase, side string) (*corev1.Pod, error) {
	e.t.Helper()
	suffix := c.ns
	if suffix == "" {
		suffix = "main"
	}
	pod := c.pod(side)
	pod.Namespace = ns(side, suffix)
	if c.workload == "" {
		if err := e.admin.Create(e.ctx, pod); err != nil {
			return nil, err
		}
		return pod, nil
	}
	meta := metav1.ObjectMeta{Namespace: pod.Namespace, Name: c.name}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{caseLabel: c.name}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations}, Spec: pod.Spec}
	var workload client.Object
	switch c.workload {
	case "Deployment":
		workload = &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: selector, Template: template}}
	case "StatefulSet":
		workload = &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: selector, Template: template}}
	case "Job":
		template.Spec.RestartPolicy = corev1.RestartPolicyNever
		workload = &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: template}}
	default:
		e.t.Fatalf("%s: unknown workload kind %q", c.name, c.workload)
	}
	if err := e.admin.Create(e.ctx, workload); err != nil {
		e.t.Fatalf("%s: creating the %s in %s: %v", c.name, c.workload, pod.Namespace, err)
	}
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := e.admin.List(ctx, pods, client.InNamespace(pod.Namespace), client.MatchingLabels{caseLabel: c.name}); err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		got = &pods.Items[0]
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("%s: the %s in %s has no pod: %v", c.name, c.workload, pod.Namespace, err)
	}
	return got, nil
}

// admission is how the API server answered a pod's creation: "admitted", or its error with the
// side's namespace names normalized.
func admission(err error) string {
	if err == nil {
		return "admitted"
	}
	return sideNames.ReplaceAllString(err.Error(), "injdiff-<side>-")
}

// pod builds the case's pod for side: every "injdiff-<side>-" in an annotation becomes the side's
// namespace prefix.
func (c podCase) pod(side string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: map[string]string{caseLabel: c.name}, Annotations: map[string]string{}},
		Spec:       corev1.PodSpec{Containers: c.containers},
	}
	for k, v := range c.labels {
		p.Labels[k] = v
	}
	for k, v := range c.annotations {
		p.Annotations[k] = strings.ReplaceAll(v, "injdiff-<side>-", "injdiff-"+side+"-")
	}
	b, _ := json.Marshal(p.Spec)
	p.Spec = corev1.PodSpec{}
	_ = json.Unmarshal(b, &p.Spec) // a copy: cases share their containers' slices
	if c.spec != nil {
		c.spec(&p.Spec)
	}
	return p
}

// instrumented says whether a webhook instrumented the pod: it has more OTEL_ variables than
// the pod that was sent (sent; nil for none).
func instrumented(p, sent *corev1.Pod) bool {
	return otelVars(p) > otelVars(sent)
}

// otelVars counts the OTEL_ variables of a pod's containers and init containers.
func otelVars(p *corev1.Pod) int {
	if p == nil {
		return 0
	}
	n := 0
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		for _, v := range c.Env {
			if strings.HasPrefix(v.Name, "OTEL_") {
				n++
			}
		}
	}
	return n
}

// dumpEnv names a folder that receives both admitted pods of every case (<case>.<side>.json,
// normalized), to read a difference whole.
const dumpEnv = "INJECTDIFF_DUMP"

func dump(t *testing.T, name string, up, ours map[string]any) {
	if err := sidebyside.Dump(os.Getenv(dumpEnv), name, up, ours); err != nil {
		t.Error(err)
	}
}
