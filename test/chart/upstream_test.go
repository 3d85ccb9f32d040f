package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/testenv"
)

// This file checks the chart against upstream's opentelemetry-operator chart, as users of upstream
// run it (unmodified copies in ../shared/fixtures/upstream-helm-charts): a release made with
// upstream's chart can be upgraded to this one, and every value of upstream's values.yaml is
// either carried out or refused or listed, never silently ignored.

// upstreamVersions are the upstream chart versions whose values users bring: 0.101.0 (operator
// 0.140.0, the version test/takeover switches from) and 0.122.0 (the newest in the snapshot).
var upstreamVersions = []string{"0.101.0", "0.122.0"}

func upstreamChartDir(t testing.TB, version string) string {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(), "..", "shared", "fixtures", "upstream-helm-charts", "opentelemetry-operator-"+version)
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		t.Fatalf("upstream chart %s: %v (upstream's charts are expected at ../shared/fixtures/upstream-helm-charts from the repository root)", version, err)
	}
	return dir
}

func renderUpstream(t testing.TB, version string, r release) []*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.LoadDir(upstreamChartDir(t, version))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := renderChart(t, ch, r)
	if err != nil {
		t.Fatalf("rendering upstream's chart %s: %v", version, err)
	}
	return objs
}

// TestManagerSelectorEqualsUpstream: the manager Deployment's selector (immutable) is upstream's
// for the same release name and values, so `helm upgrade` from upstream's release keeps the
// Deployment; its Services select the same pods, and the objects users' own objects point at
// (Services and their port names, the metrics ClusterRole, the webhook configurations) have
// upstream's names.
func TestManagerSelectorEqualsUpstream(t *testing.T) {
	selector := func(objs []*unstructured.Unstructured, name string) map[string]any {
		d := find(objs, "Deployment", name)
		if d == nil {
			t.Fatalf("no Deployment %s in %v", name, names(objs))
		}
		s, _, _ := unstructured.NestedMap(d.Object, "spec", "selector")
		return s
	}
	for _, version := range upstreamVersions {
		for _, tc := range []struct {
			r    release
			full string
		}{
			{release{name: "otel"}, full},
			{release{name: "opentelemetry-operator", namespace: "opentelemetry-operator-system"}, "opentelemetry-operator"},
			{release{name: "otel", values: map[string]any{"nameOverride": "otelop"}}, "otel-otelop"},
			{release{name: "otel", values: map[string]any{"fullnameOverride": "operator"}}, "operator"},
		} {
			t.Run(version+"/"+tc.full, func(t *testing.T) {
				up, ours := renderUpstream(t, version, tc.r), render(t, tc.r)
				want, got := selector(up, tc.full), selector(ours, tc.full)
				if !reflect.DeepEqual(want, got) {
					t.Errorf("manager Deployment selector = %v, upstream's chart %s: %v", got, version, want)
				}
				for _, kind := range []string{"Service", "ClusterRole", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
					for _, u := range up {
						if u.GetKind() != kind || (kind == "ClusterRole" && !strings.HasSuffix(u.GetName(), "-metrics")) {
							continue
						}
						o := find(ours, kind, u.GetName())
						if o == nil {
							t.Errorf("upstream's chart has %s %s; this chart renders none", kind, u.GetName())
							continue
						}
						if kind == "Service" {
							// Named ports of upstream's Service must be ours too; 0.101.0's https
							// port is its kube-rbac-proxy's, which this chart does not run (the
							// manager serves /metrics over HTTPS on port metrics, as 0.122.0's).
							for _, p := range portNames(u) {
								if p != "" && !(p == "https" && version == "0.101.0") && !slices.Contains(portNames(o), p) {
									t.Errorf("Service %s has ports %v; upstream's has a port named %s", o.GetName(), portNames(o), p)
								}
							}
							su, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector")
							so, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
							if !reflect.DeepEqual(su, so) {
								t.Errorf("Service %s selector = %v, upstream's %v", o.GetName(), so, su)
							}
						}
					}
				}
			})
		}
	}
	// Positive control: the comparison sees a selector that differs (another nameOverride in
	// this chart only).
	up := renderUpstream(t, upstreamVersions[0], release{name: "otel"})
	other := render(t, release{name: "otel", values: map[string]any{"nameOverride": "otelop", "fullnameOverride": full}})
	if reflect.DeepEqual(selector(up, full), selector(other, full)) {
		t.Errorf("control: selectors with different nameOverride compare equal")
	}
}

func portNames(svc *unstructured.Unstructured) []string {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var out []string
	for _, p := range ports {
		n, _ := p.(map[string]any)["name"].(string)
		out = append(out, n)
	}
	return out
}

// leaf is one leaf key of a values file: its path (segments may contain dots, such as
// kubernetes.io/os) and default value. Empty maps and lists are leaves.
type leaf struct {
	path []string
	def  any
}

func (l leaf) String() string { return strings.Join(l.path, ".") }

func leaves(prefix []string, m map[string]any) []leaf {
	var out []leaf
	for k, v := range m {
		p := append(slices.Clone(prefix), k)
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, leaves(p, sub)...)
			continue
		}
		out = append(out, leaf{p, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func upstreamLeaves(t testing.TB, version string) []leaf {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(upstreamChartDir(t, version), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return leaves(nil, m)
}

// nonDefault are the values the test gives keys whose type alone does not make a valid
// non-default value.
var nonDefault = map[string]any{
	"manager.image.imagePullPolicy":                         "Always",
	"admissionWebhooks.failurePolicy":                       "Ignore",
	"admissionWebhooks.pods.failurePolicy":                  "Fail",
	"admissionWebhooks.certManager.issuerRef":               map[string]any{"kind": "ClusterIssuer", "name": "corp-ca"},
	"admissionWebhooks.certManager.duration":                "2160h",
	"admissionWebhooks.certManager.renewBefore":             "360h",
	"admissionWebhooks.namespaceSelector":                   map[string]any{"matchLabels": map[string]any{"otel": "on"}},
	"admissionWebhooks.objectSelector":                      map[string]any{"matchExpressions": []any{map[string]any{"key": "skip-otel", "operator": "DoesNotExist"}}},
	"admissionWebhooks.certFile":                            "certs/tls.crt",
	"admissionWebhooks.keyFile":                             "certs/tls.key",
	"admissionWebhooks.caFile":                              "certs/ca.crt",
	"affinity":                                              map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "pool", "operator": "In", "values": []any{"system"}}}}}}}},
	"tolerations":                                           []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
	"topologySpreadConstraints":                             []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "opentelemetry-operator"}}}},
	"imagePullSecrets":                                      []any{map[string]any{"name": "registry-pull"}},
	"clusterDomain":                                         "corp.internal",
	"nodeSelector.kubernetes.io/os":                         "windows",
	"extraObjects":                                          []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": `{{ include "opentelemetry-operator.fullname" . }}-extra`}, "data": map[string]any{"k": "v"}}},
	"manager.config":                                        map[string]any{"collectorConfigMapEntry": "collector.yaml"},
	"manager.resources":                                     map[string]any{"limits": map[string]any{"cpu": "500m"}},
	"manager.extraArgs":                                     []any{"--sync-period=1h"},
	"manager.extraEnvs":                                     []any{map[string]any{"name": "GOMEMLIMIT", "value": "200MiB"}},
	"manager.env.ENABLE_WEBHOOKS":                           "false",
	"manager.featureGates":                                  "+operator.targetallocator.fallbackstrategy",
	"manager.featureGatesMap":                               map[string]any{"operator.targetallocator.fallbackstrategy": true},
	"manager.securityContext.capabilities.drop":             []any{"NET_RAW"},
	"manager.securityContext.seccompProfile.type":           "Unconfined",
	"manager.serviceMonitor.metricsEndpoints":               []any{map[string]any{"port": "metrics", "interval": "15s"}},
	"manager.serviceMonitor.relabelings":                    []any{map[string]any{"action": "replace", "targetLabel": "team", "replacement": "platform"}},
	"manager.serviceMonitor.metricRelabelings":              []any{map[string]any{"action": "drop", "sourceLabels": []any{"__name__"}, "regex": "go_.*"}},
	"manager.prometheusRule.groups":                         []any{map[string]any{"name": "mine", "rules": []any{map[string]any{"alert": "Mine", "expr": "vector(1)"}}}},
	"manager.prometheusRule.defaultRules.duration":          "10m",
	"manager.prometheusRule.runbookUrl":                     "https://runbooks.example.com/otel",
	"manager.verticalPodAutoscaler.controlledResources":     []any{"cpu"},
	"manager.verticalPodAutoscaler.maxAllowed":              map[string]any{"cpu": "1"},
	"manager.verticalPodAutoscaler.minAllowed":              map[string]any{"cpu": "10m"},
	"manager.verticalPodAutoscaler.updatePolicy.updateMode": "Off",
	"kubeRBACProxy.extraArgs":                               []any{"--tls-min-version=VersionTLS13"},
	"kubeRBACProxy.resources":                               map[string]any{"limits": map[string]any{"cpu": "100m"}},
	"kubeRBACProxy.securityContext.capabilities.drop":       []any{"NET_RAW"},
	"testFramework.certManager.env":                         []any{map[string]any{"name": "CERT_MANAGER_PORT", "value": "8443"}},
	"testFramework.resources":                               map[string]any{"limits": map[string]any{"cpu": "100m"}},
	"testFramework.securityContext.capabilities.drop":       []any{"NET_RAW"},
	"pdb.maxUnavailable":                                    1,
}

// contexts are values set in both renders of a key whose effect depends on another switch, as in
// upstream's chart (the PDB's settings need pdb.create, cert-manager's need cert-manager mode).
var contexts = map[string]map[string]any{
	"pdb.":                                  {"pdb": map[string]any{"create": true}},
	"manager.serviceMonitor.":               {"manager": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}},
	"manager.prometheusRule.":               {"manager": map[string]any{"prometheusRule": map[string]any{"enabled": true, "defaultRules": map[string]any{"enabled": true}}}},
	"admissionWebhooks.certManager.":        {"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}},
	"admissionWebhooks.secretAnnotations.":  {"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}},
	"admissionWebhooks.secretLabels":        {"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}},
	"clusterDomain":                         {"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}},
	"admissionWebhooks.autoGenerateCert.en": {"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": false}}},
}

// otherValue returns a value of the same type as def that is not def.
func otherValue(t *testing.T, l leaf) any {
	if v, ok := nonDefault[l.String()]; ok {
		return v
	}
	switch d := l.def.(type) {
	case bool:
		return !d
	case float64:
		return d + 1
	case string:
		if d == "" {
			return "example"
		}
		return d + "-x"
	case map[string]any:
		return map[string]any{"example.com/key": "value"}
	}
	t.Fatalf("%s: no non-default value for default %#v; add one to nonDefault", l, l.def)
	return nil
}

// withValue returns a deep copy of base with path set to value.
func withValue(base map[string]any, path []string, value any) map[string]any {
	out := deepCopy(base).(map[string]any)
	m := out
	for _, seg := range path[:len(path)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// outcome is what a key set to another value than upstream's default does in this chart.
type outcome string

const (
	honoured outcome = "honoured" // the rendered objects change
	refused  outcome = "refused"  // install fails with a message naming the key
	listed   outcome = "listed"   // NOTES.txt names the key
)

// TestUpstreamValues walks every leaf key of upstream's values.yaml (0.101.0 and 0.122.0) and
// renders this chart twice: with the key at upstream's default and at another value. The key
// counts as honoured when the rendered objects differ, refused when the install fails with an
// error naming the key, listed when NOTES.txt names it. Every key must be one of the three; the
// render at upstream's default must succeed without listing the key (the control: what changed
// is the value alone).
func TestUpstreamValues(t *testing.T) {
	ch := loadChart(t)
	counts := map[outcome]int{}
	seen := map[string]outcome{}
	total := 0
	for _, version := range upstreamVersions {
		for _, l := range upstreamLeaves(t, version) {
			key := l.String()
			total++
			t.Run(version+"/"+key, func(t *testing.T) {
				// The CRDs take most of a render's time; keys other than crds.* leave them out.
				base := map[string]any{"crds": map[string]any{"create": false}}
				if strings.HasPrefix(key, "crds.") {
					base = map[string]any{}
				}
				for prefix, ctx := range contexts {
					if strings.HasPrefix(key, prefix) {
						base = deepCopy(base).(map[string]any)
						for k, v := range ctx {
							base[k] = v
						}
					}
				}
				objsDef, notesDef, err := renderChartNotes(t, ch, release{values: withValue(base, l.path, l.def)})
				if err != nil {
					t.Fatalf("at upstream's default %#v: %v", l.def, err)
				}
				if strings.Contains(notesDef, key) {
					t.Fatalf("at upstream's default %#v NOTES.txt already lists %s:\n%s", l.def, key, notesDef)
				}
				other := otherValue(t, l)
				objs, notes, err := renderChartNotes(t, ch, release{values: withValue(base, l.path, other)})
				var o outcome
				switch {
				case err != nil && strings.Contains(err.Error(), key):
					o = refused
				case err != nil:
					t.Fatalf("%s=%v: install fails without naming the key: %v", key, other, err)
				case !reflect.DeepEqual(objsDef, objs):
					o = honoured
				case strings.Contains(notes, key):
					o = listed
				default:
					t.Fatalf("%s=%v renders the same objects as %#v and is neither refused nor listed in NOTES.txt", key, other, l.def)
				}
				t.Logf("%s=%v: %s", key, other, o)
				counts[o]++
				seen[key] = o
			})
		}
	}
	covered := counts[honoured] + counts[refused] + counts[listed]
	t.Logf("upstream values.yaml leaf keys (%s): %d key checks, %d distinct keys; honoured %d, refused %d, listed %d; covered %d/%d (%.0f%%)",
		strings.Join(upstreamVersions, ", "), total, len(seen), counts[honoured], counts[refused], counts[listed], covered, total, 100*float64(covered)/float64(total))
	if total < 200 {
		t.Errorf("only %d leaf keys found in upstream's values files; the walk is broken", total)
	}
}

// TestUpstreamValuesRefusedMessage: a refused key's message says what to do, and a key under
// opentelemetry-operator (kube-stack's form) is refused too; a value file copied from upstream's
// defaults installs.
func TestUpstreamValuesRefusedMessage(t *testing.T) {
	_, err := tryRender(t, release{values: map[string]any{"opentelemetry-operator": map[string]any{
		"manager": map[string]any{"ignoreMissingCollectorCRDs": true}}}})
	if err == nil || !strings.Contains(err.Error(), "manager.ignoreMissingCollectorCRDs") || !strings.Contains(err.Error(), "crds.create") {
		t.Errorf("ignoreMissingCollectorCRDs under opentelemetry-operator: err = %v, want a refusal naming the key and crds.create", err)
	}
	for _, version := range upstreamVersions {
		data, err := os.ReadFile(filepath.Join(upstreamChartDir(t, version), "values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var vals map[string]any
		if err := yaml.Unmarshal(data, &vals); err != nil {
			t.Fatal(err)
		}
		objs, notes, err := renderChartNotes(t, loadChart(t), release{values: vals})
		if err != nil {
			t.Errorf("upstream %s's values.yaml as the user's values: %v", version, err)
			continue
		}
		if strings.Contains(notes, "no effect") {
			t.Errorf("upstream %s's default values listed as without effect:\n%s", version, notes)
		}
		// Upstream's defaults select cert-manager mode and the -k8s collector image of its version.
		if !hasArg(t, objs, "--webhook-cert-mode=cert-manager") {
			t.Errorf("upstream %s's values: args %v lack cert-manager mode", version, args(t, objs))
		}
	}
}

// TestUpstreamCIValues renders this chart with the values files upstream tests its charts with
// (ci/ of operator charts 0.101.0 and 0.122.0; opentelemetry-kube-stack 0.20.3's values.yaml and
// ci/): each installs, or is refused with a message naming the key, as listed here.
func TestUpstreamCIValues(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(), "..", "shared", "fixtures", "upstream-helm-charts")
	refusedBy := map[string]string{
		"opentelemetry-operator-0.122.0/ci/manager-config-values.yaml": "manager.config",
		"opentelemetry-operator-0.122.0/ci/feature-gates-values.yaml":  "operator.clusterobservability",
	}
	var files []string
	for _, version := range upstreamVersions {
		m, _ := filepath.Glob(filepath.Join(upstreamChartDir(t, version), "ci", "*.yaml"))
		files = append(files, m...)
	}
	stack, _ := filepath.Glob(filepath.Join(root, "opentelemetry-kube-stack-0.20.3", "ci", "*.yaml"))
	files = append(append(files, filepath.Join(root, "opentelemetry-kube-stack-0.20.3", "values.yaml")), stack...)
	if len(files) < 15 {
		t.Fatalf("found only %d values files under %s", len(files), root)
	}
	ch := loadChart(t)
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var vals map[string]any
			if err := yaml.Unmarshal(data, &vals); err != nil {
				t.Fatal(err)
			}
			objs, err := renderChart(t, ch, release{values: vals})
			if key, ok := refusedBy[rel]; ok {
				if err == nil || !strings.Contains(err.Error(), key) {
					t.Errorf("want a refusal naming %s, got %v", key, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Upstream's CI values name the -k8s repository without a tag: it gets the
			// chart's default collector tag (upstream's chart: its own default tag).
			repo, _, _ := unstructured.NestedString(vals, "manager", "collectorImage", "repository")
			if sub, ok := vals["opentelemetry-operator"].(map[string]any); ok {
				if r, _, _ := unstructured.NestedString(sub, "manager", "collectorImage", "repository"); r != "" {
					repo = r
				}
			}
			if repo != "" {
				var dep *unstructured.Unstructured
				for _, o := range objs {
					if o.GetKind() == "Deployment" {
						dep = o
					}
				}
				cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
				want := "--collector-image=" + repo + ":" + chartCollectorTag
				if !slices.Contains(cs[0].(map[string]any)["args"].([]any), any(want)) {
					t.Errorf("args %v lack %s", cs[0].(map[string]any)["args"], want)
				}
			}
			if fp, ok, _ := unstructured.NestedString(vals, "opentelemetry-operator", "admissionWebhooks", "failurePolicy"); ok {
				checked := 0
				defer func() {
					if checked == 0 {
						t.Errorf("no create/update webhook found to check failurePolicy %s on", fp)
					}
				}()
				for _, o := range objs {
					if o.GetKind() != "ValidatingWebhookConfiguration" {
						continue
					}
					ws, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
					for _, w := range ws {
						name := w.(map[string]any)["name"].(string)
						if !strings.Contains(name, "createupdate") {
							continue
						}
						checked++
						if w.(map[string]any)["failurePolicy"] != fp {
							t.Errorf("webhook %s failurePolicy %v, want kube-stack's %s", name, w.(map[string]any)["failurePolicy"], fp)
						}
					}
				}
			}
		})
	}
}

// TestReuseValuesFromUpstream renders this chart as `helm upgrade --reuse-values` does from a
// release of upstream's chart: the chart's own values.yaml is replaced by the old release's
// (upstream's defaults), so every key this chart reads must be read safely without its defaults,
// and upstream's defaults are neither refused nor listed. (That the chart's own defaults, such as
// its resources, are then missing is issue 28 point 7, not handled here.)
func TestReuseValuesFromUpstream(t *testing.T) {
	for _, version := range upstreamVersions {
		t.Run(version, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(upstreamChartDir(t, version), "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			ch := loadChart(t)
			var vals map[string]any
			if err := yaml.Unmarshal(data, &vals); err != nil {
				t.Fatal(err)
			}
			ch.Values = vals
			objs, notes, err := renderChartNotes(t, ch, release{})
			if err != nil {
				t.Fatalf("--reuse-values from upstream's %s: %v", version, err)
			}
			if strings.Contains(notes, "no effect") {
				t.Errorf("upstream's defaults listed as without effect:\n%s", notes)
			}
			// Control: the render is upstream's defaults, not this chart's (cert-manager mode,
			// upstream's collector image tag).
			tag, _, _ := unstructured.NestedString(vals, "manager", "collectorImage", "tag")
			if !hasArg(t, objs, "--webhook-cert-mode=cert-manager") || argWithPrefix(t, objs, "--collector-image=") != "--collector-image="+collector.DefaultCollectorImageRepository+"-k8s:"+tag {
				t.Errorf("args %v are not upstream's defaults", args(t, objs))
			}
		})
	}
}
