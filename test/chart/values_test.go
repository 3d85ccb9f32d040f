package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

const full = "otel-opentelemetry-operator" // full name of release "otel"

var operatorKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment",
	"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

// manager returns the manager container of the rendered Deployment.
func manager(t testing.TB, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	d := find(objs, "Deployment", full)
	if d == nil {
		t.Fatalf("no Deployment %s rendered; kinds: %v", full, kinds(objs))
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if c.(map[string]any)["name"] == "manager" {
			return c.(map[string]any)
		}
	}
	t.Fatalf("Deployment %s has no manager container", full)
	return nil
}

func args(t testing.TB, objs []*unstructured.Unstructured) []string {
	var out []string
	for _, a := range manager(t, objs)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func hasArg(t testing.TB, objs []*unstructured.Unstructured, arg string) bool {
	return slices.Contains(args(t, objs), arg)
}

func crdCount(objs []*unstructured.Unstructured) int { return kinds(objs)["CustomResourceDefinition"] }

// TestDefaultRendersCRDsAndOperator: with no values the chart installs the four CRDs upstream
// installs by default and the operator in self-managed certificate mode.
func TestDefaultRendersCRDsAndOperator(t *testing.T) {
	objs := render(t, release{})
	if n := crdCount(objs); n != 4 {
		t.Errorf("rendered %d CRDs, want 4", n)
	}
	for _, k := range operatorKinds {
		if kinds(objs)[k] == 0 {
			t.Errorf("no %s rendered", k)
		}
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s lacks helm.sh/resource-policy: keep (uninstall would delete every custom resource)", o.GetName())
		}
		if ns := o.GetNamespace(); ns != "" && ns != "observability" {
			t.Errorf("%s %s is in namespace %q, want the release namespace", o.GetKind(), o.GetName(), ns)
		}
	}
	if !hasArg(t, objs, "--webhook-cert-mode=self") {
		t.Errorf("default args %v lack --webhook-cert-mode=self", args(t, objs))
	}
	if kinds(objs)["Certificate"]+kinds(objs)["Issuer"] != 0 {
		t.Errorf("cert-manager objects rendered by default: %v", kinds(objs))
	}
}

// TestKubeStackCRDsRelease: the service provider's control-plane release (flux.CRDsValues) gets
// the CRDs and nothing else.
func TestKubeStackCRDsRelease(t *testing.T) {
	objs := render(t, release{values: flux.CRDsValues()})
	if n := crdCount(objs); n != 4 || len(objs) != 4 {
		t.Errorf("rendered %v, want exactly the 4 CRDs", kinds(objs))
	}
}

// TestKubeStackWorkloadRelease: the service provider's workload release (flux.WorkloadValues)
// gets the operator without CRDs and without admission webhooks, named after the instance, with
// the user's operator values applied.
func TestKubeStackWorkloadRelease(t *testing.T) {
	user := map[string]any{"opentelemetry-operator": map[string]any{
		"manager": map[string]any{"extraEnvs": []any{map[string]any{"name": "GOMEMLIMIT", "value": "200MiB"}}},
		"admissionWebhooks": map[string]any{
			"certManager":      map[string]any{"enabled": false},
			"autoGenerateCert": map[string]any{"enabled": true},
		},
	}}
	id := instance.ID("default", "otel")
	wfull := instance.WorkloadHelmReleaseName(id)
	objs := render(t, release{values: flux.WorkloadValues(user, []string{"registry-pull"}, id)})
	if n := crdCount(objs); n != 0 {
		t.Errorf("workload release rendered %d CRDs, want none", n)
	}
	for _, k := range operatorKinds {
		webhookKind := strings.HasSuffix(k, "WebhookConfiguration")
		if got := kinds(objs)[k] != 0; got == webhookKind {
			t.Errorf("%s rendered: %v, want %v (the workload operator serves no webhooks)", k, got, !webhookKind)
		}
	}
	d := find(objs, "Deployment", wfull)
	if d == nil {
		t.Fatalf("no Deployment %s: %v", wfull, names(objs))
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	m := cs[0].(map[string]any)
	if env := m["env"]; !reflect.DeepEqual(env, []any{map[string]any{"name": "GOMEMLIMIT", "value": "200MiB"}}) {
		t.Errorf("manager env = %v, want the user's extraEnvs", env)
	}
	ps, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "imagePullSecrets")
	if !reflect.DeepEqual(ps, []any{map[string]any{"name": "registry-pull"}}) {
		t.Errorf("imagePullSecrets = %v, want the provider's pull secret", ps)
	}
	if !hasArgIn(objs, wfull, "--enable-webhooks=false") || find(objs, "Service", wfull+"-webhook") != nil {
		t.Errorf("args %v: the workload operator must run without webhooks and webhook Service", m["args"])
	}
}

// TestKubeStackKeysIgnored: kube-stack keys for components this chart does not install change
// nothing.
func TestKubeStackKeysIgnored(t *testing.T) {
	want := render(t, release{})
	got := render(t, release{values: map[string]any{
		"collectors":             map[string]any{"daemon": map[string]any{"enabled": true, "mode": "daemonset"}},
		"instrumentation":        map[string]any{"enabled": true},
		"kubeStateMetrics":       map[string]any{"enabled": true},
		"nodeExporter":           map[string]any{"enabled": true},
		"clusterRole":            map[string]any{"enabled": true, "rules": []any{}},
		"cleanupJob":             map[string]any{"enabled": true},
		"defaultCRConfig":        map[string]any{"enabled": true},
		"crds":                   map[string]any{"installPrometheus": true},
		"opentelemetry-operator": map[string]any{"enabled": true},
	}})
	if !reflect.DeepEqual(want, got) {
		t.Errorf("kube-stack-only keys changed the rendered objects")
	}
}

// TestPrecedence: a key under opentelemetry-operator wins over the same key at the top level,
// including false; maps merge key by key, lists are replaced.
func TestPrecedence(t *testing.T) {
	objs := render(t, release{values: map[string]any{
		"manager": map[string]any{
			"image":     map[string]any{"repository": "top/operator", "tag": "top"},
			"extraArgs": []any{"--sync-period=1h"},
		},
		"imagePullSecrets":  []any{map[string]any{"name": "top"}},
		"global":            map[string]any{"imagePullSecrets": []any{"ignored"}},
		"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}},
		"opentelemetry-operator": map[string]any{
			"manager":           map[string]any{"image": map[string]any{"tag": "sub"}, "extraArgs": []any{"--max-concurrent-reconciles=2"}},
			"imagePullSecrets":  []any{"sub"}, // bare names are accepted, as the service provider reads them
			"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": false}},
		},
	}})
	m := manager(t, objs)
	if m["image"] != "top/operator:sub" {
		t.Errorf("image = %v, want top/operator:sub (repository from the top level, tag from opentelemetry-operator)", m["image"])
	}
	if !hasArg(t, objs, "--max-concurrent-reconciles=2") || hasArg(t, objs, "--sync-period=1h") {
		t.Errorf("args %v: extraArgs under opentelemetry-operator must replace the top-level list", args(t, objs))
	}
	if !hasArg(t, objs, "--webhook-cert-mode=self") || kinds(objs)["Certificate"] != 0 {
		t.Errorf("opentelemetry-operator.admissionWebhooks.certManager.enabled=false must win over the top-level true: args %v", args(t, objs))
	}
	sa := find(objs, "ServiceAccount", full)
	if ps, _, _ := unstructured.NestedSlice(sa.Object, "imagePullSecrets"); !reflect.DeepEqual(ps, []any{map[string]any{"name": "sub"}}) {
		t.Errorf("ServiceAccount imagePullSecrets = %v, want [sub]", ps)
	}
}

// TestCRDSwitches covers crds.create, opentelemetry-operator.crds.create, crds.installOtel and
// opentelemetry-operator.enabled.
func TestCRDSwitches(t *testing.T) {
	for _, tc := range []struct {
		name           string
		values         map[string]any
		crds, operator bool
	}{
		{"crds.create=false", map[string]any{"crds": map[string]any{"create": false}}, false, true},
		{"sub crds.create=false", map[string]any{"opentelemetry-operator": map[string]any{"crds": map[string]any{"create": false}}}, false, true},
		{"sub crds.create=true over top false", map[string]any{"crds": map[string]any{"create": false}, "opentelemetry-operator": map[string]any{"crds": map[string]any{"create": true}}}, true, true},
		{"installOtel=false", map[string]any{"crds": map[string]any{"installOtel": false, "create": true}}, false, true},
		{"installOtel=true over create=false", map[string]any{"crds": map[string]any{"installOtel": true}, "opentelemetry-operator": map[string]any{"crds": map[string]any{"create": false}}}, true, true},
		{"operator disabled", map[string]any{"opentelemetry-operator": map[string]any{"enabled": false}}, true, false},
		{"nothing", map[string]any{"crds": map[string]any{"installOtel": false}, "opentelemetry-operator": map[string]any{"enabled": false}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, release{values: tc.values})
			if got := crdCount(objs) == 4; got != tc.crds {
				t.Errorf("CRDs rendered: %v, want %v (%v)", got, tc.crds, kinds(objs))
			}
			if got := find(objs, "Deployment", full) != nil; got != tc.operator {
				t.Errorf("operator rendered: %v, want %v (%v)", got, tc.operator, kinds(objs))
			}
			if !tc.operator && len(objs) != crdCount(objs) {
				t.Errorf("with the operator disabled only CRDs may render, got %v", kinds(objs))
			}
		})
	}
}

// TestCertManagerMode: certManager.enabled renders a Certificate for the webhook Service into
// the mounted Secret, a self-signed Issuer unless issuerRef is given, and cainjector annotations.
func TestCertManagerMode(t *testing.T) {
	objs := render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}}})
	if !hasArg(t, objs, "--webhook-cert-mode=cert-manager") {
		t.Errorf("args %v lack --webhook-cert-mode=cert-manager", args(t, objs))
	}
	for _, a := range args(t, objs) {
		if strings.HasPrefix(a, "--webhook-cert-secret") || strings.HasPrefix(a, "--webhook-cert-inject") {
			t.Errorf("cert-manager mode passes self-mode flag %s", a)
		}
	}
	cert := find(objs, "Certificate", full+"-serving-cert")
	if cert == nil || find(objs, "Issuer", full+"-selfsigned-issuer") == nil {
		t.Fatalf("Certificate or Issuer missing: %v", kinds(objs))
	}
	dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if want := []string{full + "-webhook.observability.svc", full + "-webhook.observability.svc.cluster.local"}; !reflect.DeepEqual(dns, want) {
		t.Errorf("Certificate dnsNames = %v, want %v", dns, want)
	}
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	d := find(objs, "Deployment", full)
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	if got := vols[0].(map[string]any)["secret"]; !reflect.DeepEqual(got, map[string]any{"secretName": secret}) {
		t.Errorf("cert volume = %v, want the Certificate's Secret %s", got, secret)
	}
	want := "observability/" + full + "-serving-cert"
	for _, o := range objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		case "CustomResourceDefinition":
			if _, conv, _ := unstructured.NestedMap(o.Object, "spec", "conversion", "webhook"); !conv {
				continue
			}
		default:
			continue
		}
		if got := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != want {
			t.Errorf("%s %s: cert-manager.io/inject-ca-from = %q, want %q", o.GetKind(), o.GetName(), got, want)
		}
	}

	objs = render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{
		"enabled": true, "issuerRef": map[string]any{"kind": "ClusterIssuer", "name": "corp-ca"}}}}})
	if kinds(objs)["Issuer"] != 0 {
		t.Errorf("an Issuer is rendered although issuerRef is set")
	}
	cert = find(objs, "Certificate", full+"-serving-cert")
	if ref, _, _ := unstructured.NestedMap(cert.Object, "spec", "issuerRef"); !reflect.DeepEqual(ref, map[string]any{"kind": "ClusterIssuer", "name": "corp-ca"}) {
		t.Errorf("issuerRef = %v", ref)
	}
}

// TestFilesMode: with cert-manager and autoGenerateCert off, the operator reads a Secret the user
// provides and the chart writes admissionWebhooks.caBundle into every webhook.
func TestFilesMode(t *testing.T) {
	objs := render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{
		"autoGenerateCert": map[string]any{"enabled": false},
		"secretName":       "my-cert",
		"caBundle":         "Q0E=",
	}}})
	if !hasArg(t, objs, "--webhook-cert-mode=files") {
		t.Errorf("args %v lack --webhook-cert-mode=files", args(t, objs))
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		o := find(objs, kind, map[string]string{"MutatingWebhookConfiguration": full + "-mutation", "ValidatingWebhookConfiguration": full + "-validation"}[kind])
		ws, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, w := range ws {
			if got, _, _ := unstructured.NestedString(w.(map[string]any), "clientConfig", "caBundle"); got != "Q0E=" {
				t.Errorf("%s webhook %v: caBundle = %q", kind, w.(map[string]any)["name"], got)
			}
		}
	}
	d := find(objs, "Deployment", full)
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	if got := vols[0].(map[string]any)["secret"]; !reflect.DeepEqual(got, map[string]any{"secretName": "my-cert"}) {
		t.Errorf("cert volume = %v, want Secret my-cert", got)
	}
}

// TestNames: upstream chart names; the release name alone when it contains the chart name;
// fullnameOverride; long names stay valid.
func TestNames(t *testing.T) {
	objs := render(t, release{name: "opentelemetry-operator"})
	for kind, name := range map[string]string{
		"Deployment": "opentelemetry-operator", "ServiceAccount": "opentelemetry-operator",
		"MutatingWebhookConfiguration":   "opentelemetry-operator-mutation",
		"ValidatingWebhookConfiguration": "opentelemetry-operator-validation",
		"ClusterRole":                    "opentelemetry-operator-manager",
	} {
		if find(objs, kind, name) == nil {
			t.Errorf("release opentelemetry-operator: no %s %s", kind, name)
		}
	}
	if find(objs, "Service", "opentelemetry-operator-webhook") == nil || find(objs, "Service", "opentelemetry-operator") == nil {
		t.Errorf("release opentelemetry-operator: webhook or metrics Service misnamed")
	}
	objs = render(t, release{values: map[string]any{"fullnameOverride": "otelop"}})
	if find(objs, "Deployment", "otelop") == nil || !hasArgIn(objs, "otelop", "--webhook-service-name=otelop-webhook") {
		t.Errorf("fullnameOverride not applied: %v", names(objs))
	}
	long := strings.Repeat("x", 53)
	objs = render(t, release{name: long})
	for _, o := range objs {
		if o.GetKind() == "Service" && len(o.GetName()) > 63 {
			t.Errorf("Service name %q is longer than 63 characters", o.GetName())
		}
	}
}

func hasArgIn(objs []*unstructured.Unstructured, deployment, arg string) bool {
	d := find(objs, "Deployment", deployment)
	if d == nil {
		return false
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, a := range cs[0].(map[string]any)["args"].([]any) {
		if a == arg {
			return true
		}
	}
	return false
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}
