package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/manifests/collector"
)

// argWithPrefix returns the manager argument starting with prefix, or "".
func argWithPrefix(t testing.TB, objs []*unstructured.Unstructured, prefix string) string {
	for _, a := range args(t, objs) {
		if strings.HasPrefix(a, prefix) {
			return a
		}
	}
	return ""
}

// TestImageValues: a repository alone gets the chart's default tag (the operator's collector
// version for collectors, appVersion for the target allocator and bridge), the default collector
// image is the -k8s distribution at the operator's collector version, an empty repository passes
// no flag, and half an image is refused.
func TestImageValues(t *testing.T) {
	appVersion := loadChart(t).Metadata.AppVersion
	if got, want := argWithPrefix(t, render(t, release{}), "--collector-image="), "--collector-image="+defaultCollectorImage; got != want {
		t.Errorf("default: %q, want %q", got, want)
	}
	for name, tc := range map[string]struct {
		manager map[string]any
		want    []string
	}{
		// opentelemetry-kube-stack 0.20.3's default values for its operator subchart.
		"kube-stack repository alone": {map[string]any{"collectorImage": map[string]any{"repository": "otel/opentelemetry-collector-k8s"}},
			[]string{"--collector-image=otel/opentelemetry-collector-k8s:" + chartCollectorTag}},
		"tag alone": {map[string]any{"collectorImage": map[string]any{"tag": "0.150.0"}},
			[]string{"--collector-image=" + collector.DefaultCollectorImageRepository + "-k8s:0.150.0"}},
		"empty repository: built-in default": {map[string]any{"collectorImage": map[string]any{"repository": ""}}, nil},
		"allocator and bridge repository alone": {map[string]any{
			"targetAllocatorImage": map[string]any{"repository": "example.org/ta"},
			"opampBridgeImage":     map[string]any{"repository": "example.org/bridge", "tag": "2"},
		}, []string{"--collector-image=" + defaultCollectorImage, "--target-allocator-image=example.org/ta:" + appVersion, "--operator-opamp-bridge-image=example.org/bridge:2"}},
		"auto-instrumentation": {map[string]any{"autoInstrumentationImage": map[string]any{
			"apacheHttpd": map[string]any{"repository": "example.org/httpd", "tag": "1"},
			"nodejs":      map[string]any{"repository": "example.org/node", "tag": "2"},
		}}, []string{"--collector-image=" + defaultCollectorImage, "--auto-instrumentation-nodejs-image=example.org/node:2", "--auto-instrumentation-apache-httpd-image=example.org/httpd:1"}},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, release{values: map[string]any{"manager": tc.manager}})
			var got []string
			for _, a := range args(t, objs) {
				if strings.HasSuffix(strings.SplitN(a, "=", 2)[0], "-image") {
					got = append(got, a)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("image flags = %v, want %v", got, tc.want)
			}
		})
	}
	for _, m := range []map[string]any{
		{"targetAllocatorImage": map[string]any{"tag": "1"}},
		{"autoInstrumentationImage": map[string]any{"java": map[string]any{"repository": "example.org/java"}}},
		{"collectorImage": map[string]any{"repository": "", "tag": "1"}},
	} {
		if _, err := tryRender(t, release{values: map[string]any{"manager": m}}); err == nil || !strings.Contains(err.Error(), "set ") {
			t.Errorf("%v: err = %v, want a refusal saying what to set", m, err)
		}
	}
}

// webhooks returns the webhooks of the chart's webhook configurations by name.
func webhooks(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, o := range objs {
		if o.GetKind() != "MutatingWebhookConfiguration" && o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		ws, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, w := range ws {
			out[w.(map[string]any)["name"].(string)] = w.(map[string]any)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no webhooks rendered: %v", names(objs))
	}
	return out
}

// TestWebhookValues: upstream's failurePolicy (create/update webhooks of the custom resources),
// pods.failurePolicy, selectors, timeout and namePrefix; admissionWebhooks.create=false.
func TestWebhookValues(t *testing.T) {
	def := webhooks(t, render(t, release{}))
	sel := map[string]any{"matchLabels": map[string]any{"otel": "on"}}
	objs := render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{
		"failurePolicy": "Ignore", "pods": map[string]any{"failurePolicy": "Fail"}, "timeoutSeconds": 20,
		"namespaceSelector": sel, "objectSelector": sel, "namePrefix": "0000",
	}}})
	for name, w := range webhooks(t, objs) {
		want := def[name]["failurePolicy"]
		switch {
		case name == "mpod.kb.io":
			want = "Fail"
		case want == "Fail":
			want = "Ignore"
		}
		if w["failurePolicy"] != want {
			t.Errorf("%s: failurePolicy %v, want %v", name, w["failurePolicy"], want)
		}
		wantNS := sel
		if name == "mpod.kb.io" { // plus this chart's exclusions (TestPodWebhookExcludesSystemNamespaces)
			wantNS = map[string]any{"matchLabels": sel["matchLabels"], "matchExpressions": []any{map[string]any{
				"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system", "observability"}}}}
		}
		if !reflect.DeepEqual(w["namespaceSelector"], wantNS) || !reflect.DeepEqual(w["objectSelector"], sel) || numbers(w["timeoutSeconds"]) != float64(20) {
			t.Errorf("%s: selectors/timeout not applied: %v %v %v", name, w["namespaceSelector"], w["objectSelector"], w["timeoutSeconds"])
		}
	}
	if def["vopentelemetrycollectordeletebeta.kb.io"]["failurePolicy"] != "Ignore" || def["mopentelemetrycollectorbeta.kb.io"]["failurePolicy"] != "Fail" {
		t.Errorf("control: default failure policies are not config/default's")
	}
	if find(objs, "MutatingWebhookConfiguration", "0000-"+full+"-mutation") == nil || !hasArg(t, objs, "--webhook-cert-inject-mutating=0000-"+full+"-mutation") {
		t.Errorf("namePrefix: %v, args %v", names(objs), args(t, objs))
	}

	objs = render(t, release{values: map[string]any{"admissionWebhooks": map[string]any{"create": false}}})
	for _, k := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		if kinds(objs)[k] != 0 {
			t.Errorf("admissionWebhooks.create=false renders %s", k)
		}
	}
	if find(objs, "Service", full+"-webhook") != nil || !hasArg(t, objs, "--enable-webhooks=false") || argWithPrefix(t, objs, "--webhook-") != "" {
		t.Errorf("admissionWebhooks.create=false: %v, args %v", names(objs), args(t, objs))
	}
	crd := find(objs, "CustomResourceDefinition", "opentelemetrycollectors.opentelemetry.io")
	if s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); s != "None" {
		t.Errorf("without webhooks the collector CRD must not convert through one: strategy %q", s)
	}
}

// TestManagerValues: featureGatesMap, env, go instrumentation, metrics.secure, imagePullPolicy,
// certPeriodDays, automountServiceAccountToken, namespaceOverride, additionalLabels.
func TestManagerValues(t *testing.T) {
	objs := render(t, release{values: map[string]any{
		"namespaceOverride":            "elsewhere",
		"additionalLabels":             map[string]any{"team": "{{ .Release.Name }}-obs"},
		"automountServiceAccountToken": false,
		"manager": map[string]any{
			"featureGates":        "+operator.golang.flags",
			"featureGatesMap":     map[string]any{"operator.networkpolicy": false, "operator.targetallocator.fallbackstrategy": true},
			"env":                 map[string]any{"ENABLE_WEBHOOKS": "true", "GOGC": "50"},
			"extraEnvs":           []any{map[string]any{"name": "A", "value": "b"}},
			"autoInstrumentation": map[string]any{"go": map[string]any{"enabled": true}},
			"metrics":             map[string]any{"secure": false},
			"image":               map[string]any{"imagePullPolicy": "Always"},
		},
		"admissionWebhooks": map[string]any{"autoGenerateCert": map[string]any{"certPeriodDays": 30}},
	}})
	for _, a := range []string{"--feature-gates=+operator.golang.flags,-operator.networkpolicy,operator.targetallocator.fallbackstrategy",
		"--enable-go-instrumentation", "--metrics-secure=false", "--webhook-cert-validity=720h"} {
		if !hasArg(t, objs, a) {
			t.Errorf("args %v lack %s", args(t, objs), a)
		}
	}
	m := manager(t, objs)
	if want := []any{map[string]any{"name": "GOGC", "value": "50"}, map[string]any{"name": "A", "value": "b"}}; !reflect.DeepEqual(m["env"], want) {
		t.Errorf("env = %v, want %v (ENABLE_WEBHOOKS is upstream's operator's switch, not passed)", m["env"], want)
	}
	if m["imagePullPolicy"] != "Always" {
		t.Errorf("imagePullPolicy = %v", m["imagePullPolicy"])
	}
	d := find(objs, "Deployment", full)
	if d.GetNamespace() != "elsewhere" || d.GetLabels()["team"] != "otel-obs" {
		t.Errorf("Deployment namespace %q labels %v", d.GetNamespace(), d.GetLabels())
	}
	if a, _, _ := unstructured.NestedBool(d.Object, "spec", "template", "spec", "automountServiceAccountToken"); a {
		t.Errorf("pod automountServiceAccountToken not false")
	}
	mounts, _ := m["volumeMounts"].([]any)
	if !slices.ContainsFunc(mounts, func(v any) bool {
		return v.(map[string]any)["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"
	}) {
		t.Errorf("no projected token mounted: %v", mounts)
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && ns != "elsewhere" {
			t.Errorf("%s %s in namespace %q, want namespaceOverride", o.GetKind(), o.GetName(), ns)
		}
		for _, s := range func() []any { v, _, _ := unstructured.NestedSlice(o.Object, "subjects"); return v }() {
			if ns := s.(map[string]any)["namespace"]; ns != nil && ns != "elsewhere" {
				t.Errorf("%s %s: subject namespace %v", o.GetKind(), o.GetName(), ns)
			}
		}
	}
	if _, err := tryRender(t, release{values: map[string]any{"manager": map[string]any{"env": map[string]any{"ENABLE_WEBHOOKS": "false"}}}}); err == nil || !strings.Contains(err.Error(), "admissionWebhooks.create") {
		t.Errorf("ENABLE_WEBHOOKS=false: err = %v, want a refusal pointing at admissionWebhooks.create", err)
	}
}

// TestMonitoringValues: PDB, ServiceMonitor (HTTPS with the scraper's token by default) and
// PrometheusRule with the chart's default rules, off by default (the PDB with one replica:
// TestAvailabilityDefaults).
func TestMonitoringValues(t *testing.T) {
	def := render(t, release{})
	for _, k := range []string{"PodDisruptionBudget", "ServiceMonitor", "PrometheusRule"} {
		if kinds(def)[k] != 0 {
			t.Errorf("%s rendered by default", k)
		}
	}
	objs := render(t, release{values: map[string]any{
		"pdb": map[string]any{"create": true, "minAvailable": 1},
		"manager": map[string]any{
			"serviceMonitor": map[string]any{"enabled": true, "extraLabels": map[string]any{"release": "prom"}},
			"prometheusRule": map[string]any{"enabled": true, "runbookUrl": "https://runbooks.example.com/otel",
				"defaultRules": map[string]any{"enabled": true, "additionalRuleLabels": map[string]any{"team": "obs"}}},
		},
	}})
	pdb := find(objs, "PodDisruptionBudget", full)
	d := find(objs, "Deployment", full)
	dsel, _, _ := unstructured.NestedMap(d.Object, "spec", "selector")
	if pdb == nil || !reflect.DeepEqual(pdb.Object["spec"].(map[string]any)["selector"], dsel) {
		t.Errorf("PDB %v does not select the Deployment's pods (%v)", pdb, dsel)
	}
	sm := find(objs, "ServiceMonitor", full)
	if sm == nil || sm.GetLabels()["release"] != "prom" {
		t.Fatalf("ServiceMonitor: %v", sm)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != "metrics" || eps[0].(map[string]any)["scheme"] != "https" {
		t.Errorf("ServiceMonitor endpoints %v, want port metrics over https", eps)
	}
	svc := find(objs, "Service", full)
	if !slices.Contains(portNames(svc), "metrics") {
		t.Errorf("metrics Service ports %v have no port named metrics", portNames(svc))
	}
	pr := find(objs, "PrometheusRule", full)
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	rules := groups[0].(map[string]any)["rules"].([]any)
	var alerts []string
	for _, r := range rules {
		rm := r.(map[string]any)
		alerts = append(alerts, rm["alert"].(string))
		if rm["labels"].(map[string]any)["team"] != "obs" || !strings.HasPrefix(rm["annotations"].(map[string]any)["runbook_url"].(string), "https://runbooks.example.com/otel#") {
			t.Errorf("rule %v lacks additionalRuleLabels or runbook_url", rm)
		}
		if !strings.Contains(rm["expr"].(string), `job="`+full+`"`) {
			t.Errorf("rule %s does not select the operator's metrics: %s", rm["alert"], rm["expr"])
		}
	}
	if len(alerts) < 3 {
		t.Errorf("default rules %v", alerts)
	}
}

// TestCollectorVersionMatchesOperator: the chart's default collector tag (the tag a repository
// alone gets) is the one upstream's chart 0.101.0 passes by default, and a release of the
// operator's collector version's minor.
func TestCollectorVersionMatchesOperator(t *testing.T) {
	objs := render(t, release{values: map[string]any{"manager": map[string]any{"collectorImage": map[string]any{"repository": "r"}}}})
	if got := argWithPrefix(t, objs, "--collector-image="); got != "--collector-image=r:"+chartCollectorTag {
		t.Errorf("%q: the chart's collector tag (templates/_helpers.tpl otelop.collectorImageTag) is not %s", got, chartCollectorTag)
	}
	minor := func(v string) string { return v[:strings.LastIndex(v, ".")] }
	if minor(chartCollectorTag) != minor(collector.DefaultCollectorVersion) {
		t.Errorf("the chart's collector tag %s is not a release of the operator's collector version %s", chartCollectorTag, collector.DefaultCollectorVersion)
	}
	var up struct {
		Manager struct {
			CollectorImage struct{ Tag string } `json:"collectorImage"`
		} `json:"manager"`
	}
	data, err := os.ReadFile(filepath.Join(upstreamChartDir(t, "0.101.0"), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &up); err != nil {
		t.Fatal(err)
	}
	if up.Manager.CollectorImage.Tag != chartCollectorTag {
		t.Errorf("upstream's chart 0.101.0 passes collector tag %q, this chart %q: a switch would roll every collector", up.Manager.CollectorImage.Tag, chartCollectorTag)
	}
}
