package chart

import (
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/chart/internal/configrender"
)

// This file checks what keeps the webhooks available: the PodDisruptionBudget and the spreading of
// the manager's replicas, the pod webhook's namespace exclusions, and the admission alerts of the
// PrometheusRule (the same as config/prometheus's).

// spread returns the Deployment's topologySpreadConstraints.
func spread(d *unstructured.Unstructured) []any {
	s, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "topologySpreadConstraints")
	return s
}

// deploymentSelector is the Deployment's spec.selector.matchLabels.
func deploymentSelector(d *unstructured.Unstructured) map[string]any {
	s, _, _ := unstructured.NestedMap(d.Object, "spec", "selector", "matchLabels")
	return s
}

// checkDefaultSpread fails unless d prefers one replica per node (soft) counting its own pods only.
func checkDefaultSpread(t *testing.T, d *unstructured.Unstructured) {
	t.Helper()
	s := spread(d)
	if len(s) != 1 {
		t.Fatalf("Deployment %s: topologySpreadConstraints %v; want the default one", d.GetName(), s)
	}
	c := s[0].(map[string]any)
	sel, _, _ := unstructured.NestedMap(c, "labelSelector", "matchLabels")
	if c["topologyKey"] != "kubernetes.io/hostname" || c["whenUnsatisfiable"] != "ScheduleAnyway" ||
		numbers(c["maxSkew"]) != float64(1) || !reflect.DeepEqual(sel, deploymentSelector(d)) {
		t.Errorf("Deployment %s: default spread %v; want hostname, ScheduleAnyway, maxSkew 1, the Deployment's selector %v",
			d.GetName(), c, deploymentSelector(d))
	}
}

// compareSpread: config/default's and the chart's Deployments spread alike, each constraint
// counting its own Deployment's pods.
func compareSpread(t *testing.T, c, h *unstructured.Unstructured) {
	strip := func(d *unstructured.Unstructured) []any {
		var out []any
		for _, e := range spread(d) {
			m := runtime.DeepCopyJSONValue(e).(map[string]any)
			if sel, _, _ := unstructured.NestedMap(m, "labelSelector", "matchLabels"); !reflect.DeepEqual(sel, deploymentSelector(d)) {
				t.Errorf("Deployment %s: spread counts pods %v, not its own %v", d.GetName(), sel, deploymentSelector(d))
			}
			delete(m, "labelSelector")
			out = append(out, numbersDeep(m))
		}
		return out
	}
	cs, hs := strip(c), strip(h)
	if len(cs) == 0 || !reflect.DeepEqual(cs, hs) {
		t.Errorf("topologySpreadConstraints differ (selectors aside): config/default %v, chart %v", cs, hs)
	}
}

// numbersDeep applies numbers to every value of a map.
func numbersDeep(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = numbers(v)
	}
	return m
}

// comparePDB: config/default's budget and the chart's (at 2 replicas) select their Deployment's
// pods and let the same number of pods go at 2 replicas.
func comparePDB(t *testing.T, c, h *unstructured.Unstructured, cfg, objs []*unstructured.Unstructured) {
	for _, p := range []struct {
		pdb  *unstructured.Unstructured
		objs []*unstructured.Unstructured
	}{{c, cfg}, {h, objs}} {
		sel, _, _ := unstructured.NestedMap(p.pdb.Object, "spec", "selector", "matchLabels")
		var d *unstructured.Unstructured
		for _, o := range p.objs {
			if o.GetKind() == "Deployment" && reflect.DeepEqual(deploymentSelector(o), sel) {
				d = o
			}
		}
		if d == nil {
			t.Errorf("PodDisruptionBudget %s selects %v: no Deployment has that selector", p.pdb.GetName(), sel)
		}
	}
	if cd, hd := allowedDisruptions(t, c, 2), allowedDisruptions(t, h, 2); cd != 1 || hd != 1 {
		t.Errorf("at 2 replicas config/default's budget allows %d pods down, the chart's %d; want 1 and 1", cd, hd)
	}
}

// allowedDisruptions is how many of n ready pods a budget with integer bounds lets go.
func allowedDisruptions(t *testing.T, pdb *unstructured.Unstructured, n int) int {
	spec := pdb.Object["spec"].(map[string]any)
	if v, ok := spec["maxUnavailable"]; ok {
		return int(numbers(v).(float64))
	}
	if v, ok := spec["minAvailable"]; ok {
		return n - int(numbers(v).(float64))
	}
	t.Fatalf("PodDisruptionBudget %s has neither bound", pdb.GetName())
	return 0
}

// TestAvailabilityDefaults: with more than one replica the chart renders a budget (one pod down at
// a time) by default; every Deployment (main, shards) spreads its replicas over nodes unless the
// user places them; upstream's explicit pdb.create false, and pdb.create true with one replica,
// are honoured.
func TestAvailabilityDefaults(t *testing.T) {
	one := render(t, release{})
	if kinds(one)["PodDisruptionBudget"] != 0 {
		t.Errorf("one replica: a budget is rendered (minAvailable 1 would block every drain)")
	}
	checkDefaultSpread(t, find(one, "Deployment", full))

	two := render(t, release{values: map[string]any{"replicaCount": 2, "manager": map[string]any{"shards": []any{"a"}}}})
	pdb := find(two, "PodDisruptionBudget", full)
	if pdb == nil {
		t.Fatalf("replicaCount 2: no PodDisruptionBudget (rendered %v)", names(two))
	}
	if got := allowedDisruptions(t, pdb, 2); got != 1 {
		t.Errorf("replicaCount 2: the budget allows %d of 2 pods down; want 1", got)
	}
	sel, _, _ := unstructured.NestedMap(pdb.Object, "spec", "selector", "matchLabels")
	if !reflect.DeepEqual(sel, deploymentSelector(find(two, "Deployment", full))) {
		t.Errorf("the budget selects %v, not the main Deployment's pods", sel)
	}
	checkDefaultSpread(t, find(two, "Deployment", full))
	checkDefaultSpread(t, find(two, "Deployment", full+"-shard-a"))

	for _, tc := range []struct {
		name   string
		values map[string]any
		pdb    bool
	}{
		{"upstream's explicit false", map[string]any{"replicaCount": 2, "pdb": map[string]any{"create": false}}, false},
		{"true with one replica", map[string]any{"pdb": map[string]any{"create": true}}, true},
		{"maxUnavailable", map[string]any{"replicaCount": 3, "pdb": map[string]any{"maxUnavailable": 2}}, true},
	} {
		objs := render(t, release{values: tc.values})
		if got := find(objs, "PodDisruptionBudget", full) != nil; got != tc.pdb {
			t.Errorf("%s: budget rendered = %v; want %v", tc.name, got, tc.pdb)
		}
		if tc.name == "maxUnavailable" {
			if got := allowedDisruptions(t, find(objs, "PodDisruptionBudget", full), 3); got != 2 {
				t.Errorf("maxUnavailable 2: %d pods may go; want 2", got)
			}
		}
	}

	mine := []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
		"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "opentelemetry-operator"}}}}
	objs := render(t, release{values: map[string]any{"topologySpreadConstraints": mine}})
	if got := spread(find(objs, "Deployment", full)); len(got) != 1 || got[0].(map[string]any)["topologyKey"] != "topology.kubernetes.io/zone" {
		t.Errorf("the user's topologySpreadConstraints: rendered %v; want only theirs", got)
	}
	anti := map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
		map[string]any{"weight": 100, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname",
			"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "opentelemetry-operator"}}}}}}}
	objs = render(t, release{values: map[string]any{"affinity": anti}})
	if got := spread(find(objs, "Deployment", full)); len(got) != 0 {
		t.Errorf("with the user's podAntiAffinity the chart still adds %v", got)
	}
	nodeOnly := map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "pool", "operator": "In", "values": []any{"system"}}}}}}}}
	checkDefaultSpread(t, find(render(t, release{values: map[string]any{"affinity": nodeOnly}}), "Deployment", full))
}

// podWebhookSelects says whether the pod webhook's namespaceSelector selects a namespace named
// name (the label the API server sets on every namespace), as the API server evaluates it.
func podWebhookSelects(t *testing.T, objs []*unstructured.Unstructured, name string, extra map[string]string) bool {
	t.Helper()
	w := webhooks(t, objs)["mpod.kb.io"]
	raw, ok := w["namespaceSelector"]
	if !ok {
		return true
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.(map[string]any), &sel); err != nil {
		t.Fatal(err)
	}
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		t.Fatalf("pod webhook namespaceSelector %v: %v", raw, err)
	}
	l := labels.Set{"kubernetes.io/metadata.name": name}
	for k, v := range extra {
		l[k] = v
	}
	return s.Matches(l)
}

// TestPodWebhookExcludesSystemNamespaces: by default the pod webhook is not called for pods in
// kube-system or the release's namespace, and still is for any other namespace (the control);
// the other webhooks keep config/default's (no) selector; the exclusions add to the user's
// namespaceSelector and can be turned off (upstream's: every namespace).
func TestPodWebhookExcludesSystemNamespaces(t *testing.T) {
	for _, ns := range []string{"observability", "otel-system"} {
		objs := render(t, release{namespace: ns})
		for name, want := range map[string]bool{"kube-system": false, ns: false, "default": true, "shop": true} {
			if got := podWebhookSelects(t, objs, name, nil); got != want {
				t.Errorf("release in %s: pod webhook called for namespace %s = %v; want %v", ns, name, got, want)
			}
		}
		for name, w := range webhooks(t, objs) {
			if _, ok := w["namespaceSelector"]; ok && name != "mpod.kb.io" {
				t.Errorf("%s has a namespaceSelector %v; only the pod webhook excludes namespaces", name, w["namespaceSelector"])
			}
		}
	}
	objs := render(t, release{namespace: "ops", values: map[string]any{"namespaceOverride": "otel-ops"}})
	if podWebhookSelects(t, objs, "otel-ops", nil) || !podWebhookSelects(t, objs, "ops", nil) {
		t.Errorf("namespaceOverride otel-ops: the operator's namespace is otel-ops, not the release's")
	}

	optIn := map[string]any{"matchLabels": map[string]any{"otel": "on"}}
	objs = render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{
		"namespaceSelector": optIn, "pods": map[string]any{"excludeNamespaces": []any{"kube-system", "db"}}}}})
	for name, want := range map[string]bool{"kube-system": false, "db": false, "observability": false, "shop": true} {
		if got := podWebhookSelects(t, objs, name, map[string]string{"otel": "on"}); got != want {
			t.Errorf("with the user's selector: namespace %s labelled otel=on selected = %v; want %v", name, got, want)
		}
	}
	if podWebhookSelects(t, objs, "shop", nil) {
		t.Errorf("the user's matchLabels were dropped: namespace shop without otel=on is selected")
	}

	objs = render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{
		"pods": map[string]any{"excludeNamespaces": []any{}, "excludeOperatorNamespace": false}}}})
	if w := webhooks(t, objs)["mpod.kb.io"]; w["namespaceSelector"] != nil {
		t.Errorf("exclusions off: namespaceSelector %v; want none (upstream's)", w["namespaceSelector"])
	}
}

// configAdmissionRules returns config/prometheus's alerts by name.
func configAdmissionRules(t *testing.T) map[string]map[string]any {
	t.Helper()
	objs, err := configrender.Render(filepath.Join(testenv.RepoRoot(), "config", "prometheus"))
	if err != nil {
		t.Fatal(err)
	}
	return rulesOf(objs)
}

func rulesOf(objs []*unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, o := range objs {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
		for _, g := range groups {
			for _, r := range g.(map[string]any)["rules"].([]any) {
				if a, ok := r.(map[string]any)["alert"].(string); ok {
					out[a] = r.(map[string]any)
				}
			}
		}
	}
	return out
}

// TestPrometheusRuleHasConfigAdmissionAlerts: the chart's default rules include every alert of
// config/prometheus with the same expression (scoped to the release's job and namespace: removing
// that selector gives config/prometheus's text), duration, labels and annotations, plus the
// chart's additional labels and runbook URL. The control: with defaultRules off, none.
func TestPrometheusRuleHasConfigAdmissionAlerts(t *testing.T) {
	want := configAdmissionRules(t)
	if len(want) < 2 {
		t.Fatalf("config/prometheus has %d alerts; the test reads it wrong", len(want))
	}
	pr := func(defaultRules bool) map[string]map[string]any {
		return rulesOf(render(t, release{values: map[string]any{"manager": map[string]any{"prometheusRule": map[string]any{
			"enabled": true, "runbookUrl": "https://runbooks.example.com/otel",
			"defaultRules": map[string]any{"enabled": defaultRules, "additionalRuleLabels": map[string]any{"team": "obs"}}}}}}))
	}
	got := pr(true)
	sel := `job="` + full + `", namespace="observability"`
	scoped := regexp.MustCompile(`otelop_[a-z_]+\{` + regexp.QuoteMeta(sel))
	for name, c := range want {
		h, ok := got[name]
		if !ok {
			t.Errorf("the chart's PrometheusRule lacks %s (has %v)", name, keys(got))
			continue
		}
		expr := h["expr"].(string)
		if n, m := len(scoped.FindAllString(expr, -1)), len(regexp.MustCompile(`otelop_[a-z_]+`).FindAllString(expr, -1)); n == 0 || n != m {
			t.Errorf("%s: %d of %d metric reads scoped to %s: %s", name, n, m, sel, expr)
		}
		unscoped := strings.ReplaceAll(strings.ReplaceAll(expr, "{"+sel+"}", ""), sel+", ", "")
		if unscoped != c["expr"] {
			t.Errorf("%s: expression differs from config/prometheus's:\nchart (selector removed): %q\nconfig:                    %q", name, unscoped, c["expr"])
		}
		if h["for"] != c["for"] {
			t.Errorf("%s: for %v, config/prometheus %v", name, h["for"], c["for"])
		}
		hl, cl := h["labels"].(map[string]any), c["labels"].(map[string]any)
		for k, v := range cl {
			if hl[k] != v {
				t.Errorf("%s: label %s=%v, config/prometheus %v", name, k, hl[k], v)
			}
		}
		ha, ca := h["annotations"].(map[string]any), c["annotations"].(map[string]any)
		for k, v := range ca {
			if ha[k] != v {
				t.Errorf("%s: annotation %s=%q, config/prometheus %q", name, k, ha[k], v)
			}
		}
		if hl["team"] != "obs" || ha["runbook_url"] != "https://runbooks.example.com/otel#"+strings.ToLower(name) {
			t.Errorf("%s: additionalRuleLabels/runbookUrl not applied: %v %v", name, hl, ha)
		}
	}
	off := pr(false)
	for name := range want {
		if _, ok := off[name]; ok {
			t.Errorf("defaultRules.enabled false: %s rendered", name)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
