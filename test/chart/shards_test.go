package chart

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// manager.shards adds one Deployment per key running --shard=<key> without webhooks; the main
// Deployment keeps the webhooks and takes what no shard claims. No Deployment's selector matches
// another's pods, and the webhook Service reaches the main instance only.
func TestShards(t *testing.T) {
	objs := render(t, release{values: map[string]any{"manager": map[string]any{"shards": []any{"a", "b"}}}})
	var deps []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deps = append(deps, o)
		}
	}
	if len(deps) != 3 {
		t.Fatalf("%d Deployments rendered; want the main one and one per shard", len(deps))
	}
	want := map[string][]string{
		full:              {"--shard=!sharding.opentelemetry.io/key"},
		full + "-shard-a": {"--shard=a", "--enable-webhooks=false"},
		full + "-shard-b": {"--shard=b", "--enable-webhooks=false"},
	}
	for _, d := range deps {
		flags := containerArgs(t, d)
		for _, f := range want[d.GetName()] {
			if !slices.Contains(flags, f) {
				t.Errorf("Deployment %s: args %v lack %s", d.GetName(), flags, f)
			}
		}
		webhookFlags := slices.ContainsFunc(flags, func(f string) bool { return len(f) > 14 && f[:14] == "--webhook-cert" })
		if main := d.GetName() == full; webhookFlags != main {
			t.Errorf("Deployment %s: webhook certificate flags present = %v; want %v", d.GetName(), webhookFlags, main)
		}
		sel := selector(t, d)
		for _, other := range deps {
			podLabels, _, _ := unstructured.NestedStringMap(other.Object, "spec", "template", "metadata", "labels")
			if other != d && sel.Matches(labels.Set(podLabels)) {
				t.Errorf("Deployment %s's selector matches the pods of %s", d.GetName(), other.GetName())
			}
		}
	}
	for _, o := range objs {
		if o.GetKind() != "Service" {
			continue
		}
		svcSel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
		for _, d := range deps {
			podLabels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
			if matches := labels.SelectorFromSet(svcSel).Matches(labels.Set(podLabels)); matches != (d.GetName() == full) {
				t.Errorf("Service %s selects the pods of %s: %v", o.GetName(), d.GetName(), matches)
			}
		}
	}
	if _, err := tryRender(t, release{values: map[string]any{"manager": map[string]any{"shards": []any{"Not_A_Label"}}}}); err == nil {
		t.Error("a shard key that is not a label value was accepted")
	}
}

func containerArgs(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var out []string
	for _, a := range cs[0].(map[string]any)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func selector(t *testing.T, d *unstructured.Unstructured) labels.Selector {
	t.Helper()
	m, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
	if len(m) == 0 {
		t.Fatalf("Deployment %s has no selector", d.GetName())
	}
	return labels.SelectorFromSet(m)
}
