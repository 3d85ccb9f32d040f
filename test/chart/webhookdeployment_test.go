package chart

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// webhookDeploymentValues turns manager.webhookDeployment on with replicas.
func webhookDeploymentValues(replicas int) map[string]any {
	return map[string]any{"manager": map[string]any{"webhookDeployment": map[string]any{"enabled": true, "replicas": replicas}}}
}

// manager.webhookDeployment: a second Deployment <fullname>-webhook runs the webhooks only
// (--enable-reconcilers=false, the certificate flags and mount, its own replicas, spread and
// PodDisruptionBudget); the main Deployment reconciles without webhooks; the webhook Service and the
// webhook PodDisruptionBudget select the webhook pods alone, the metrics Services one Deployment
// each, and no Deployment's selector matches the other's pods.
func TestWebhookDeployment(t *testing.T) {
	objs := render(t, release{values: webhookDeploymentValues(3)})
	byName := map[string]*unstructured.Unstructured{}
	var deps []*unstructured.Unstructured
	for _, o := range objs {
		byName[o.GetKind()+"/"+o.GetName()] = o
		if o.GetKind() == "Deployment" {
			deps = append(deps, o)
		}
	}
	main, webhook := byName["Deployment/"+full], byName["Deployment/"+full+"-webhook"]
	if len(deps) != 2 || main == nil || webhook == nil {
		t.Fatalf("Deployments %d, main %v, webhook %v; want %s and %s-webhook", len(deps), main != nil, webhook != nil, full, full)
	}
	mainArgs, webhookArgs := containerArgs(t, main), containerArgs(t, webhook)
	if !slices.Contains(mainArgs, "--enable-webhooks=false") || slices.Contains(mainArgs, "--enable-reconcilers=false") {
		t.Errorf("main Deployment args %v: want --enable-webhooks=false and the reconcilers on", mainArgs)
	}
	if !slices.Contains(webhookArgs, "--enable-reconcilers=false") || slices.Contains(webhookArgs, "--enable-webhooks=false") {
		t.Errorf("webhook Deployment args %v: want --enable-reconcilers=false and the webhooks on", webhookArgs)
	}
	certFlags := func(args []string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--webhook-cert-secret=") })
	}
	if certFlags(mainArgs) || !certFlags(webhookArgs) {
		t.Errorf("certificate flags: main %v, webhook %v; want the webhook Deployment's only", certFlags(mainArgs), certFlags(webhookArgs))
	}
	if n, _, _ := unstructured.NestedInt64(webhook.Object, "spec", "replicas"); n != 3 {
		t.Errorf("webhook Deployment replicas %d; want manager.webhookDeployment.replicas 3", n)
	}
	if n, _, _ := unstructured.NestedInt64(main.Object, "spec", "replicas"); n != 1 {
		t.Errorf("main Deployment replicas %d; want replicaCount 1", n)
	}
	checkDefaultSpread(t, webhook)
	podLabels := func(d *unstructured.Unstructured) labels.Set {
		m, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
		return m
	}
	if selector(t, main).Matches(podLabels(webhook)) || selector(t, webhook).Matches(podLabels(main)) {
		t.Error("the selector of one Deployment matches the other's pods")
	}
	for name, want := range map[string]*unstructured.Unstructured{
		"Service/" + full + "-webhook":             webhook,
		"Service/" + full + "-webhook-metrics":     webhook,
		"Service/" + full:                          main,
		"PodDisruptionBudget/" + full + "-webhook": webhook,
	} {
		o := byName[name]
		if o == nil {
			t.Errorf("%s not rendered", name)
			continue
		}
		path := []string{"spec", "selector"}
		if o.GetKind() == "PodDisruptionBudget" {
			path = append(path, "matchLabels")
		}
		sel, _, _ := unstructured.NestedStringMap(o.Object, path...)
		for _, d := range deps {
			if got := labels.SelectorFromSet(sel).Matches(podLabels(d)); got != (d == want) {
				t.Errorf("%s selects the pods of %s: %v", name, d.GetName(), got)
			}
		}
	}

	// With shards: the main Deployment takes what no shard claims, without webhooks; the webhook
	// Deployment serves every shard (no --shard, which a webhook-only instance refuses).
	sharded := webhookDeploymentValues(2)
	sharded["manager"].(map[string]any)["shards"] = []any{"a"}
	for _, o := range render(t, release{values: sharded}) {
		if o.GetKind() != "Deployment" {
			continue
		}
		args := containerArgs(t, o)
		hasShard := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--shard=") })
		webhooks := !slices.Contains(args, "--enable-webhooks=false")
		if want := o.GetName() != full+"-webhook"; hasShard != want || webhooks == want {
			t.Errorf("with shards, Deployment %s: --shard %v, webhooks %v; want --shard %v, webhooks %v", o.GetName(), hasShard, webhooks, want, !want)
		}
	}

	// One replica: no webhook budget (it would block every drain); without webhooks: refused.
	for _, o := range render(t, release{values: webhookDeploymentValues(1)}) {
		if o.GetKind() == "PodDisruptionBudget" {
			t.Errorf("one webhook replica: PodDisruptionBudget %s rendered", o.GetName())
		}
	}
	off := webhookDeploymentValues(2)
	off["admissionWebhooks"] = map[string]any{"create": false}
	if _, err := tryRender(t, release{values: off}); err == nil || !strings.Contains(err.Error(), "manager.webhookDeployment.enabled") {
		t.Errorf("webhookDeployment without webhooks: err = %v; want a refusal naming the value", err)
	}
}
