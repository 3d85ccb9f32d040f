package chartswitch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// appsNS holds the user's collectors; probeNS the collectors a step creates to see which operator
// is in charge.
const appsNS, probeNS = "apps", "probe"

// collectorYAML is a user's collector in mode.
func collector(t *testing.T, ns, name, mode string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(fmt.Appendf(nil, `apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata: {name: %s, namespace: %s}
spec:
  mode: %s
  config:
    receivers: {otlp: {protocols: {grpc: {endpoint: "0.0.0.0:4317"}}}}
    exporters: {debug: {}}
    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}
`, name, ns, mode), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// createCollectors creates the user's collectors (Deployment, DaemonSet on both fake nodes,
// StatefulSet) and waits for their pods: it returns how many there are.
func createCollectors(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{appsNS, probeNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]string{"gateway": "deployment", "agent": "daemonset", "scraper": "statefulset"} {
		// The chart's CRDs were created a moment ago: the API may not serve them yet.
		poll(t, "creating collector "+name, func(ctx context.Context) (bool, error) {
			err := env.Client.Create(ctx, collector(t, appsNS, name, mode))
			if apimeta.IsNoMatchError(err) {
				return false, nil
			}
			return err == nil, err
		})
	}
	// 1 (deployment) + 2 (daemonset, two nodes) + 1 (statefulset)
	waitPods(t, appsNS, 4)
}

// waitPods waits for n Running, Ready pods in ns.
func waitPods(t *testing.T, ns string, n int) {
	t.Helper()
	poll(t, fmt.Sprintf("%d collector pods Running in %s", n, ns), func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		ready := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
		}
		return ready == n && len(pods.Items) == n, nil
	})
}

// collectorState is what a restart or a rollout of the user's collectors changes: per pod its UID,
// restart count and revision hash; per workload its generation and pod template (templates keeps
// the templates' fields, flattened, to say what changed).
type collectorState struct {
	items     map[string]string
	templates map[string]map[string]string
}

func takeState(t *testing.T) collectorState {
	t.Helper()
	ctx := context.Background()
	st := collectorState{items: map[string]string{}, templates: map[string]map[string]string{}}
	s := st.items
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(appsNS)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		var restarts int32
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		hash := p.Labels["pod-template-hash"] + p.Labels["controller-revision-hash"]
		s["Pod/"+p.Name] = fmt.Sprintf("uid=%s restarts=%d hash=%s", p.UID, restarts, hash)
	}
	add := func(kind, name string, gen int64, tmpl corev1.PodTemplateSpec) {
		b, _ := json.Marshal(tmpl)
		sum := sha256.Sum256(b)
		s[kind+"/"+name] = fmt.Sprintf("generation=%d template=%s", gen, hex.EncodeToString(sum[:8]))
		var v any
		_ = json.Unmarshal(b, &v)
		st.templates[kind+"/"+name] = flatten("", v, map[string]string{})
	}
	deps := &appsv1.DeploymentList{}
	dss := &appsv1.DaemonSetList{}
	stss := &appsv1.StatefulSetList{}
	for _, l := range []client.ObjectList{deps, dss, stss} {
		if err := env.Client.List(ctx, l, client.InNamespace(appsNS)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range deps.Items {
		add("Deployment", d.Name, d.Generation, d.Spec.Template)
	}
	for _, d := range dss.Items {
		add("DaemonSet", d.Name, d.Generation, d.Spec.Template)
	}
	for _, d := range stss.Items {
		add("StatefulSet", d.Name, d.Generation, d.Spec.Template)
		s["StatefulSet/"+d.Name] += " revision=" + d.Status.UpdateRevision
	}
	return st
}

// flatten maps every leaf of v to its path.
func flatten(path string, v any, out map[string]string) map[string]string {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(path+"."+k, e, out)
		}
	case []any:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		out[path] = fmt.Sprint(x)
	}
	return out
}

// sameState fails the test for every pod or workload that differs from before (a restart,
// a recreated pod, a changed pod template).
func sameState(t *testing.T, step string, before collectorState) {
	t.Helper()
	waitPods(t, appsNS, 4)
	after := takeState(t)
	var keys []string
	for k := range before.items {
		keys = append(keys, k)
	}
	for k := range after.items {
		if _, ok := before.items[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if before.items[k] != after.items[k] {
			t.Errorf("%s: %s changed: before %q, after %q%s", step, k, before.items[k], after.items[k],
				templateDiff(before.templates[k], after.templates[k]))
		}
	}
	if !t.Failed() {
		t.Logf("%s: %d collector pods and workloads unchanged (UIDs, restarts, templates, revisions)", step, len(keys))
	}
}

// probe creates a deployment collector in probeNS (through the webhooks of the operator now
// running), waits for its Deployment and returns the field managers that wrote it; then it
// deletes the collector and waits until it is gone (the operator in charge removes its finalizer).
func probe(t *testing.T, name string) []string {
	t.Helper()
	ctx := context.Background()
	col := collector(t, probeNS, name, "deployment")
	// Through the operator's webhooks: until the endpoint controller lists the new operator pod
	// behind the webhook Service, the API server answers "no endpoints available"; that (and only
	// that) is waited out.
	poll(t, "creating probe collector "+name+" through the operator's webhooks", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, col.DeepCopy())
		if err != nil && strings.Contains(err.Error(), "no endpoints available") {
			t.Logf("creating probe collector %s: %v (retrying)", name, err)
			return false, nil
		}
		return err == nil, err
	})
	dep := &appsv1.Deployment{}
	poll(t, "the probe collector's Deployment", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: probeNS, Name: name + "-collector"}, dep)
		return err == nil, nil
	})
	var managers []string
	for _, mf := range dep.ManagedFields {
		if mf.Manager != "kube-controller-manager" {
			managers = append(managers, mf.Manager+":"+string(mf.Operation))
		}
	}
	sort.Strings(managers)
	if err := env.Client.Delete(ctx, col); err != nil {
		t.Fatal(err)
	}
	poll(t, "the probe collector deleted", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: probeNS, Name: name}, col.DeepCopy())
		return apierrors.IsNotFound(err), nil
	})
	return managers
}

// templateDiff lists the pod template fields that differ between a and b.
func templateDiff(a, b map[string]string) string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("%s: (none) -> %q", k, v))
		}
	}
	if len(d) == 0 {
		return ""
	}
	sort.Strings(d)
	return "; template: " + strings.Join(d, ", ")
}
