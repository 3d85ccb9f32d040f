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

// WorkloadValues are the values of the workload release of instance id: the user's values with
// the CRDs and every component but the operator forced off, the full name taken from the instance
// ID, and the operator's admission webhooks off. pullSecrets, when not empty, become the
// operator's imagePullSecrets unless the user set them there.
//
// Webhooks are off because the operator in the shared workload cluster serves a control plane:
// its pod webhook would mutate the workload cluster's pods (any tenant's) with what its tenant
// wrote in its control plane, and the control plane's API server cannot reach a webhook served
// in the workload cluster anyway. The chart switches (admissionWebhooks.create, cert-manager off,
// no certificate Secret to mount) and the operator flag --enable-webhooks=false are forced;
// NoWebhookPatches removes any webhook configuration a chart renders regardless.
func WorkloadValues(user map[string]any, pullSecrets []string, id string) map[string]any {
	v := deepCopyMap(user)
	set(v, false, "crds", "installOtel")
	set(v, false, "crds", "installPrometheus")
	set(v, false, "collectors", "daemon", "enabled")
	for _, c := range componentsOff {
		set(v, false, c, "enabled")
	}
	set(v, true, "opentelemetry-operator", "enabled")
	set(v, false, "opentelemetry-operator", "crds", "create")
	// Names in the shared workload cluster, cluster-scoped ones too, come from the instance ID
	// (CheckValues refuses a user's fullnameOverride; kube-stack reads the top-level key, the
	// operator (sub)chart the nested one).
	full := instance.WorkloadHelmReleaseName(id)
	set(v, full, "fullnameOverride")
	set(v, full, "opentelemetry-operator", "fullnameOverride")
	// namespaceOverride names the control-plane namespace (CheckValues); in the workload cluster
	// everything of the release stays in the instance's namespace.
	delete(v, "namespaceOverride")
	// No admission webhooks, so no certificate either (upstream's chart would mount a named
	// secretName that nobody creates; cert-manager need not be installed).
	set(v, false, "opentelemetry-operator", "admissionWebhooks", "create")
	set(v, false, "opentelemetry-operator", "admissionWebhooks", "certManager", "enabled")
	set(v, "", "opentelemetry-operator", "admissionWebhooks", "secretName")
	operatorDefault(v, true, "admissionWebhooks", "autoGenerateCert", "enabled")
	// The operator talks only to the control plane; its namespace there comes from the
	// ServiceAccount namespace file that OperatorPatch mounts, not from a flag, because upstream's
	// operator has no flag for it (and refuses unknown ones). A user's --webhook-cert-namespace or
	// --enable-webhooks is removed, and --enable-webhooks=false (both operators have it) forced.
	args := get(v, "opentelemetry-operator", "manager", "extraArgs")
	if args == nil {
		args = get(v, "manager", "extraArgs")
	}
	set(v, forcedArgs(args), "opentelemetry-operator", "manager", "extraArgs")
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

// CheckValues refuses user values the provider must decide itself: a fullnameOverride (top-level
// or under opentelemetry-operator) would give every instance the same names in the shared
// workload cluster, and opentelemetry-operator.namespaceOverride would move every instance's
// operator into one namespace there. The top-level namespaceOverride names the operator's
// namespace in the control plane, as in upstream's provider; only instance.CPNamespace is
// allowed, the one namespace the provider's control-plane access is granted in.
func CheckValues(version string, values map[string]any) error {
	for _, path := range [][]string{{"fullnameOverride"}, {"opentelemetry-operator", "fullnameOverride"}} {
		if v := get(values, path...); v != nil && v != "" {
			return fmt.Errorf(valuesPath+".%s: must not be set: the provider names the operator's objects after the instance (%q), so that instances sharing the workload cluster never share a name",
				version, strings.Join(path, "."), instance.WorkloadHelmReleaseName("<instance-id>"))
		}
	}
	if v := get(values, "opentelemetry-operator", "namespaceOverride"); v != nil && v != "" {
		return fmt.Errorf(valuesPath+".opentelemetry-operator.namespaceOverride: must not be set: the operator runs in its instance's namespace (%q) of the shared workload cluster",
			version, instance.WorkloadNamespace("<instance-id>"))
	}
	if v := get(values, "namespaceOverride"); v != nil && v != "" && v != instance.CPNamespace {
		return fmt.Errorf(valuesPath+".namespaceOverride: %v is not allowed: the operator's control-plane namespace must be empty or %q, the only namespace the provider's control-plane access is granted in",
			version, v, instance.CPNamespace)
	}
	return nil
}

// WebhookCertSecret is the default name of the operator's webhook certificate Secret
// (admissionWebhooks.secretName). The operator keeps it in the control plane's operator namespace,
// where the provider grants access to exactly this name unless the user's values name another.
const WebhookCertSecret = "otel-operator-webhook-cert"

// NamespaceArg is our operator's flag that would move its certificate Secret and Lease to another
// namespace; a user's value is removed (the namespace comes from the mounted namespace file).
const NamespaceArg = "--webhook-cert-namespace"

// WebhooksArg is the operator flag that turns its admission webhooks on or off.
const WebhooksArg = "--enable-webhooks"

// forcedArgs returns the user's extraArgs (if a list) without any NamespaceArg or WebhooksArg,
// followed by WebhooksArg=false.
func forcedArgs(user any) []any {
	var out []any
	list, _ := user.([]any)
	for _, a := range list {
		if s, ok := a.(string); ok && (isFlag(s, NamespaceArg) || isFlag(s, WebhooksArg)) {
			continue
		}
		out = append(out, a)
	}
	return append(out, WebhooksArg+"=false")
}

func isFlag(arg, flag string) bool {
	return arg == flag || strings.HasPrefix(arg, flag+"=")
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

// OperatorNames are the names the workload release gives the operator and passes it as flags
// (our chart's naming): its webhook certificate Secret and the webhook configurations it injects
// the CA bundle into (--webhook-cert-inject-mutating/-validating).
type OperatorNames struct {
	CertSecret, MutatingWebhook, ValidatingWebhook string
}

// InstanceOperatorNames are the OperatorNames of instance id's workload release: the full name is
// the one WorkloadValues forces.
func InstanceOperatorNames(id string, user map[string]any) OperatorNames {
	full := instance.WorkloadHelmReleaseName(id)
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
