// Package flux builds the Flux objects of one OtelOperator: the OCIRepository of the
// opentelemetry-kube-stack chart and the two HelmReleases (CRDs into the control plane, the
// operator into the workload cluster), plus the Helm values of each. Everything here is pure.
package flux

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// valuesPath is the field path of the user's values, used in error messages.
const valuesPath = "spec.versions[%q].helmValues"

// componentsOff are the kube-stack components neither release may install: the provider installs
// only the CRDs and the operator.
var componentsOff = []string{"cleanupJob", "clusterRole", "defaultCRConfig", "instrumentation", "kubeStateMetrics", "nodeExporter"}

// ParseValues decodes the helmValues of a version into a map. A nil value gives an empty map; any
// value that is not a JSON object is an error naming the field.
func ParseValues(version string, raw *apiextensionsv1.JSON) (map[string]any, error) {
	out := map[string]any{}
	if raw == nil || len(raw.Raw) == 0 {
		return out, nil
	}
	var v any
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return nil, fmt.Errorf(valuesPath+": not valid JSON: %v", version, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return out, nil
		}
		return nil, fmt.Errorf(valuesPath+": must be an object of Helm values, got %T", version, v)
	}
	return m, nil
}

// ImagePullSecrets returns the names listed in values.imagePullSecrets and, for compatibility with
// the upstream provider, values.global.imagePullSecrets, without duplicates and in order. Each entry
// must be {name: <non-empty string>} (a bare string is accepted too).
func ImagePullSecrets(version string, values map[string]any) ([]string, error) {
	var names []string
	add := func(path string, list any) error {
		if list == nil {
			return nil
		}
		items, ok := list.([]any)
		if !ok {
			return fmt.Errorf(valuesPath+".%s: must be a list of {name: <secret>}, got %T", version, path, list)
		}
		for i, it := range items {
			var name string
			switch e := it.(type) {
			case string:
				name = e
			case map[string]any:
				name, _ = e["name"].(string)
			}
			if name == "" {
				return fmt.Errorf(valuesPath+".%s[%d]: must be {name: <secret in the provider namespace>}", version, path, i)
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return nil
	}
	if err := add("imagePullSecrets", values["imagePullSecrets"]); err != nil {
		return nil, err
	}
	if g, ok := values["global"].(map[string]any); ok {
		if err := add("global.imagePullSecrets", g["imagePullSecrets"]); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// CRDsValues are the values of the control-plane release: only the OpenTelemetry CRDs. The user's
// values are not used, so a user cannot turn the operator on in the control plane.
func CRDsValues() map[string]any {
	v := map[string]any{
		"crds":                   map[string]any{"installOtel": true, "installPrometheus": false},
		"opentelemetry-operator": map[string]any{"enabled": false},
		"collectors":             map[string]any{"daemon": map[string]any{"enabled": false}},
	}
	for _, c := range componentsOff {
		v[c] = map[string]any{"enabled": false}
	}
	return v
}

// WorkloadValues are the values of the workload release: the user's values with the CRDs and every
// component but the operator forced off. pullSecrets, when not empty, become the operator's
// imagePullSecrets unless the user set them there.
func WorkloadValues(user map[string]any, pullSecrets []string) map[string]any {
	v := deepCopyMap(user)
	set(v, false, "crds", "installOtel")
	set(v, false, "crds", "installPrometheus")
	set(v, false, "collectors", "daemon", "enabled")
	for _, c := range componentsOff {
		set(v, false, c, "enabled")
	}
	set(v, true, "opentelemetry-operator", "enabled")
	set(v, false, "opentelemetry-operator", "crds", "create")
	// Webhook certificates: chart-generated unless the user's values say otherwise (the workload
	// cluster need not run cert-manager).
	// The chart lets a key under opentelemetry-operator win over the same top-level key, so a
	// default is written only where the user set neither.
	operatorDefault(v, false, "admissionWebhooks", "certManager", "enabled")
	operatorDefault(v, true, "admissionWebhooks", "autoGenerateCert", "enabled")
	operatorDefault(v, CertSecretName(user), "admissionWebhooks", "secretName")
	// The operator talks only to the control plane, so its namespace there is the control plane's
	// operator namespace: with no ServiceAccount mount (OperatorPatch turns it off) the operator
	// takes the namespace of its leader-election Lease and webhook certificate Secret from
	// --webhook-cert-namespace. A user's own value of the flag is replaced.
	args := get(v, "opentelemetry-operator", "manager", "extraArgs")
	if args == nil {
		args = get(v, "manager", "extraArgs")
	}
	set(v, withNamespaceArg(args), "opentelemetry-operator", "manager", "extraArgs")
	op := v["opentelemetry-operator"].(map[string]any)
	if _, ok := op["imagePullSecrets"]; !ok && len(pullSecrets) > 0 {
		list := make([]any, 0, len(pullSecrets))
		for _, n := range pullSecrets {
			list = append(list, map[string]any{"name": n})
		}
		op["imagePullSecrets"] = list
	}
	return v
}

// WebhookCertSecret is the default name of the operator's webhook certificate Secret
// (admissionWebhooks.secretName). The operator keeps it in the control plane's operator namespace,
// where the provider grants access to exactly this name unless the user's values name another.
const WebhookCertSecret = "otel-operator-webhook-cert"

// NamespaceArg is the operator flag that names its namespace in the control plane.
const NamespaceArg = "--webhook-cert-namespace"

// withNamespaceArg returns the user's extraArgs (if a list) without any NamespaceArg, followed by
// NamespaceArg=<control-plane namespace>.
func withNamespaceArg(user any) []any {
	var out []any
	list, _ := user.([]any)
	for _, a := range list {
		if s, ok := a.(string); ok && (s == NamespaceArg || strings.HasPrefix(s, NamespaceArg+"=")) {
			continue
		}
		out = append(out, a)
	}
	return append(out, NamespaceArg+"="+instance.CPNamespace)
}

// CertSecretName is the webhook certificate Secret the workload operator uses: the user's
// opentelemetry-operator.admissionWebhooks.secretName (or the top-level one), else WebhookCertSecret.
func CertSecretName(user map[string]any) string {
	if s, ok := get(user, "opentelemetry-operator", "admissionWebhooks", "secretName").(string); ok && s != "" {
		return s
	}
	if s, ok := get(user, "admissionWebhooks", "secretName").(string); ok && s != "" {
		return s
	}
	return WebhookCertSecret
}

// chartName is the name of our operator chart, the default of its nameOverride.
const chartName = "opentelemetry-operator"

// OperatorNames are the names the workload release gives the operator and passes it as flags
// (our chart's naming): its webhook certificate Secret and the webhook configurations it injects
// the CA bundle into (--webhook-cert-inject-mutating/-validating).
type OperatorNames struct {
	CertSecret, MutatingWebhook, ValidatingWebhook string
}

// ReleaseOperatorNames computes OperatorNames for a release of our chart with the user's values:
// the full name is fullnameOverride, else the release name when it contains the chart name
// (nameOverride), else <release>-<chart name>, cut to 55 characters (a key under
// opentelemetry-operator wins over the top-level one, as in the chart).
func ReleaseOperatorNames(release string, user map[string]any) OperatorNames {
	pick := func(k string) string {
		if s, ok := get(user, "opentelemetry-operator", k).(string); ok && s != "" {
			return s
		}
		s, _ := get(user, k).(string)
		return s
	}
	cut := func(s string) string {
		if len(s) > 55 {
			s = s[:55]
		}
		return strings.TrimSuffix(s, "-")
	}
	full := pick("fullnameOverride")
	switch name := pick("nameOverride"); {
	case full != "":
		full = cut(full)
	case name == "" && strings.Contains(release, chartName), name != "" && strings.Contains(release, name):
		full = cut(release)
	case name == "":
		full = cut(release + "-" + chartName)
	default:
		full = cut(release + "-" + name)
	}
	return OperatorNames{CertSecret: CertSecretName(user), MutatingWebhook: full + "-mutation", ValidatingWebhook: full + "-validation"}
}

// get reads the value at path, nil when any part is missing.
func get(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// operatorDefault writes value at opentelemetry-operator.<path> unless the user set that key or
// the top-level <path>.
func operatorDefault(m map[string]any, value any, path ...string) {
	nested := append([]string{"opentelemetry-operator"}, path...)
	if get(m, nested...) == nil && get(m, path...) == nil {
		set(m, value, nested...)
	}
}

// set writes value at path, creating (or replacing non-map) intermediate maps.
func set(m map[string]any, value any, path ...string) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

func deepCopyMap(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range maps.All(in) {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return v
	}
}

// toJSON encodes values for a HelmRelease. Values built from JSON always encode.
func toJSON(v map[string]any) *apiextensionsv1.JSON {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("flux: encoding Helm values: %v", err))
	}
	return &apiextensionsv1.JSON{Raw: raw}
}
