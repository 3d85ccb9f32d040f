package chart

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/certs"
	"github.com/otelop/otelop/test/chart/internal/configrender"
)

// This file checks that the chart installs what config/default installs, as config/default renders
// at test time (kustomize library, the code of `kubectl kustomize`): every object of config/default
// but the Namespace has a counterpart in the chart's default render, under the name mapping below,
// with the same CRD schemas, RBAC rules, role bindings, webhooks (paths, rules, failure policies),
// Service ports and manager flags.

// chartName maps a config/default object name to the chart's name for release "otel". It is the
// test's own statement of the chart's naming (upstream chart names), independent of the chart's
// helper: objects the templates write get upstream's names, RBAC objects
// <fullname>-<suffix without -role/-rolebinding/-binding>, names without the config prefix stay.
func chartName(kind, name string) string {
	suffix, ok := strings.CutPrefix(name, configrender.NamePrefix)
	if !ok {
		return name
	}
	switch suffix {
	case "controller-manager": // Deployment and ServiceAccount
		return full
	case "webhook-service":
		return full + "-webhook"
	case "webhook-cert":
		return full + "-webhook-cert"
	case "metrics-reader": // upstream's chart name, which users' ClusterRoleBindings point at
		return full + "-metrics"
	case "mutating-webhook-configuration":
		return full + "-mutation"
	case "validating-webhook-configuration":
		return full + "-validation"
	}
	if kind == "Service" && strings.Contains(suffix, "metrics") {
		return full
	}
	return full + "-" + regexp.MustCompile(`-(role|rolebinding|binding)$`).ReplaceAllString(suffix, "")
}

// mapValue rewrites config/default's names and namespace inside a value to the chart's.
func mapValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			out[k] = mapValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = mapValue(e)
		}
		return out
	case string:
		if t == configrender.Namespace {
			return "observability"
		}
		return chartName("", t)
	}
	return v
}

// defaultCollectorImage is the --collector-image the chart passes by default: the -k8s
// distribution (upstream's chart's default) at the chart's collector tag.
var defaultCollectorImage = collector.DefaultCollectorImageRepository + "-k8s:" + chartCollectorTag

// chartCollectorTag is the default collector image's tag (templates/_helpers.tpl
// otelop.collectorImageTag): the one upstream's chart 0.101.0 passes, a patch release of the
// operator's collector version (TestCollectorVersionMatchesOperator).
const chartCollectorTag = "0.140.1"

func renderConfigDefault(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	objs, err := configrender.Render(filepath.Join(testenv.RepoRoot(), "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestChartEqualsConfigDefault compares every object of config/default with the chart's.
func TestChartEqualsConfigDefault(t *testing.T) {
	cfg := renderConfigDefault(t)
	objs := render(t, release{})
	// config/default ships its budget (maxUnavailable 1) with one replica; the chart renders one
	// from replicaCount 2 (TestAvailabilityDefaults), where both allow one pod down.
	scaled := render(t, release{values: map[string]any{"replicaCount": 2}})
	matched := map[*unstructured.Unstructured]bool{}
	for _, c := range cfg {
		if c.GetKind() == "Namespace" {
			continue
		}
		name := chartName(c.GetKind(), c.GetName())
		h := find(objs, c.GetKind(), name)
		if c.GetKind() == "PodDisruptionBudget" {
			h = find(scaled, c.GetKind(), name)
		}
		if h == nil {
			t.Errorf("config/default has %s %s; the chart renders no %s %s (rendered: %v)", c.GetKind(), c.GetName(), c.GetKind(), name, names(objs))
			continue
		}
		matched[h] = true
		t.Run(c.GetKind()+"/"+c.GetName(), func(t *testing.T) { compareObject(t, c, h, cfg, objs) })
	}
	for _, o := range objs {
		if !matched[o] {
			t.Logf("only in the chart: %s %s", o.GetKind(), o.GetName())
		}
	}
}

func compareObject(t *testing.T, c, h *unstructured.Unstructured, cfg, objs []*unstructured.Unstructured) {
	if c.GetNamespace() != "" && h.GetNamespace() != "observability" {
		t.Errorf("namespaced in config/default, chart namespace %q", h.GetNamespace())
	}
	for k, v := range c.GetAnnotations() {
		if h.GetAnnotations()[k] != v {
			t.Errorf("annotation %s=%q of config/default missing (chart: %q)", k, v, h.GetAnnotations()[k])
		}
	}
	switch c.GetKind() {
	case "CustomResourceDefinition", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding",
		"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		// Copied from config/ by `make generate` and rewritten by the templates: everything but
		// metadata must equal config/default's after the name mapping.
		equalOutsideMetadata(t, c, h)
	case "Deployment":
		compareDeployment(t, c, h)
		compareSpread(t, c, h)
	case "PodDisruptionBudget":
		comparePDB(t, c, h, cfg, objs)
	case "Service":
		compareService(t, c, h, cfg, objs)
	case "ServiceAccount":
	default:
		equalOutsideMetadata(t, c, h)
	}
}

func equalOutsideMetadata(t *testing.T, c, h *unstructured.Unstructured) {
	want := mapValue(withoutMetadata(c.Object))
	got := withoutMetadata(h.Object)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("differs from config/default (after mapping names and namespace):\n%s", diffYAML(want, got))
	}
}

func withoutMetadata(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	return out
}

// diffYAML prints the lines that differ between two values' YAML.
func diffYAML(want, got any) string {
	w, _ := yaml.Marshal(want)
	g, _ := yaml.Marshal(got)
	wl, gl := strings.Split(string(w), "\n"), strings.Split(string(g), "\n")
	var b strings.Builder
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	if b.Len() > 4000 {
		return b.String()[:4000] + "\n..."
	}
	return b.String()
}

// flags parses --name=value / --name arguments.
func flags(args []any) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		s := strings.TrimLeft(a.(string), "-")
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			v = "true"
		}
		out[k] = v
	}
	return out
}

// effectiveConfigFlags adds the flags whose defaults name config/default's objects (the operator
// reads them when config/manager does not pass them; the chart passes them for its own names).
func effectiveConfigFlags(f map[string]string) map[string]string {
	if f["webhook-cert-mode"] != string(certs.ModeSelf) {
		return f
	}
	d := certs.DefaultOptions()
	for k, v := range map[string]string{
		"webhook-cert-secret":            d.SecretName,
		"webhook-service-name":           d.ServiceName,
		"webhook-cert-inject-mutating":   strings.Join(d.MutatingWebhookConfigurations, ","),
		"webhook-cert-inject-validating": strings.Join(d.ValidatingWebhookConfigurations, ","),
	} {
		if _, ok := f[k]; !ok {
			f[k] = v
		}
	}
	return f
}

func container(t *testing.T, d *unstructured.Unstructured, name string) map[string]any {
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if c.(map[string]any)["name"] == name {
			return c.(map[string]any)
		}
	}
	t.Fatalf("Deployment %s has no container %s", d.GetName(), name)
	return nil
}

func compareDeployment(t *testing.T, c, h *unstructured.Unstructured) {
	cc, hc := container(t, c, "manager"), container(t, h, "manager")
	want := effectiveConfigFlags(flags(cc["args"].([]any)))
	for k, v := range want {
		want[k] = strings.Join(mapStrings(strings.Split(v, ",")), ",")
	}
	// The chart's own default, as upstream's chart: collectors run the -k8s distribution.
	want["collector-image"] = defaultCollectorImage
	if got := flags(hc["args"].([]any)); !reflect.DeepEqual(want, got) {
		t.Errorf("manager flags differ:\nconfig/default (names mapped): %v\nchart:                         %v", want, got)
	}
	for _, f := range []string{"ports", "livenessProbe", "readinessProbe", "resources", "securityContext", "env"} {
		if !reflect.DeepEqual(cc[f], hc[f]) {
			t.Errorf("manager %s differs:\n%s", f, diffYAML(cc[f], hc[f]))
		}
	}
	mounts := func(c map[string]any) map[string]any {
		out := map[string]any{}
		for _, m := range c["volumeMounts"].([]any) {
			out[m.(map[string]any)["mountPath"].(string)] = m.(map[string]any)["name"]
		}
		return out
	}
	if !reflect.DeepEqual(mounts(cc), mounts(hc)) {
		t.Errorf("manager volume mounts differ: %v vs %v", mounts(cc), mounts(hc))
	}
	for _, p := range [][]string{
		{"spec", "replicas"},
		{"spec", "template", "spec", "securityContext"},
		{"spec", "template", "spec", "volumes"},
		{"spec", "template", "spec", "serviceAccountName"},
	} {
		cv, _, _ := unstructured.NestedFieldNoCopy(c.Object, p...)
		hv, _, _ := unstructured.NestedFieldNoCopy(h.Object, p...)
		if cv = mapValue(cv); !reflect.DeepEqual(numbers(cv), numbers(hv)) {
			t.Errorf("%s differs: config/default %v, chart %v", strings.Join(p, "."), cv, hv)
		}
	}
}

func mapStrings(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = chartName("", s)
	}
	return out
}

// numbers makes int64 and float64 comparable (YAML decoding gives either).
func numbers(v any) any {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case int:
		return float64(t)
	}
	return v
}

// compareService checks ports (resolving named target ports against the selected pods) and that
// the selector selects the manager's pods, in config/default and in the chart.
func compareService(t *testing.T, c, h *unstructured.Unstructured, cfg, objs []*unstructured.Unstructured) {
	cp, err := servicePorts(c, cfg)
	if err != nil {
		t.Fatalf("config/default: %v", err)
	}
	hp, err := servicePorts(h, objs)
	if err != nil {
		t.Fatalf("chart: %v", err)
	}
	if !reflect.DeepEqual(cp, hp) {
		t.Errorf("ports (port/protocol -> container port) differ: config/default %v, chart %v", cp, hp)
	}
}

// servicePorts returns "port/protocol->containerPort" of svc, resolved against the Deployment its
// selector selects (an error when it selects none).
func servicePorts(svc *unstructured.Unstructured, objs []*unstructured.Unstructured) ([]string, error) {
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	var pod map[string]any
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		all := len(sel) > 0
		for k, v := range sel {
			all = all && labels[k] == v
		}
		if all {
			pod, _, _ = unstructured.NestedMap(o.Object, "spec", "template", "spec")
		}
	}
	if pod == nil {
		return nil, fmt.Errorf("Service %s selects no Deployment's pods (selector %v)", svc.GetName(), sel)
	}
	named := map[string]any{}
	for _, c := range pod["containers"].([]any) {
		for _, p := range c.(map[string]any)["ports"].([]any) {
			pm := p.(map[string]any)
			named[fmt.Sprint(pm["name"])] = pm["containerPort"]
		}
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var out []string
	for _, p := range ports {
		pm := p.(map[string]any)
		target := pm["targetPort"]
		if target == nil {
			target = pm["port"]
		}
		if s, ok := target.(string); ok {
			if n, ok := named[s]; ok {
				target = n
			} else {
				return nil, fmt.Errorf("Service %s: targetPort %q names no container port", svc.GetName(), s)
			}
		}
		proto := pm["protocol"]
		if proto == nil {
			proto = "TCP"
		}
		out = append(out, fmt.Sprintf("%v/%v->%v", numbers(pm["port"]), proto, numbers(target)))
	}
	slices.Sort(out)
	return out, nil
}
