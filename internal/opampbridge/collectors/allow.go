package collectors

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/otelop/otelop/api/v1beta1"
)

// What a remote OpAMP server may change (issue 31, finding 1). The server is not trusted with
// the pods a collector runs as: by default it may set spec.config only (and
// spec.upgradeStrategy, which says only whether the operator migrates the resource, and which
// upstream's v1beta1 type always writes). Every other field of
// its collector must equal what is there already (the existing collector; for a new one, what
// the API server makes of spec.config alone, i.e. the defaults), so that a server echoing the
// reported collector back with a new configuration is served, and one asking for an image, a
// ServiceAccount, Secrets, host access, containers, or labels and annotations (which reach the
// pods and Services) is refused with the field paths named.

// Spec fields besides config that Options.Writable may let a server change.
const (
	// WritableReplicas lets a server set spec.replicas.
	WritableReplicas = "replicas"
	// WritableResources lets a server set spec.resources.
	WritableResources = "resources"
	// WritableEnv lets a server set spec.env entries with plain values (never valueFrom).
	WritableEnv = "env"
)

// alwaysWritable are the spec fields a server may always set.
var alwaysWritable = []string{"config", "upgradeStrategy"}

// WritableFields are the values Options.Writable accepts.
var WritableFields = []string{WritableReplicas, WritableResources, WritableEnv}

// CheckWritable returns an error for a value of Options.Writable that is not in WritableFields.
func CheckWritable(fields []string) error {
	for _, f := range fields {
		if !slices.Contains(WritableFields, f) {
			return fmt.Errorf("%q is not a field a server may be allowed to change (want %s)", f, strings.Join(WritableFields, ", "))
		}
	}
	return nil
}

// checkChanges returns an error naming every field of the server's collector d that differs
// from base (nil: a collector with no fields), except spec.config, the managed label and the
// spec fields in writable. Only fields the server wrote are compared: what it leaves out it
// does not change.
func checkChanges(d *Desired, base *v1beta1.OpenTelemetryCollector, writable []string) error {
	if base == nil {
		base = &v1beta1.OpenTelemetryCollector{}
	}
	var bad []string
	bad = append(bad, changedMeta("labels", d.Object.GetLabels(), base.Labels)...)
	bad = append(bad, changedMeta("annotations", d.Object.GetAnnotations(), base.Annotations)...)
	spec, _ := d.Object.Object["spec"].(map[string]any)
	mine, err := asMap(d.typed.Spec)
	if err != nil {
		return err
	}
	theirs, err := asMap(base.Spec)
	if err != nil {
		return err
	}
	fields := make([]string, 0, len(spec))
	for k := range spec {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	for _, k := range fields {
		if slices.Contains(alwaysWritable, k) || equality.Semantic.DeepEqual(mine[k], theirs[k]) {
			continue
		}
		if src := envSources(d.typed.Spec.Env); k == WritableEnv && len(src) > 0 {
			bad = append(bad, src...)
			continue
		}
		if !slices.Contains(writable, k) {
			bad = append(bad, "spec."+k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	allowed := []string{"spec.config"}
	for _, w := range writable {
		allowed = append(allowed, "spec."+w)
	}
	return fmt.Errorf("the OpAMP server may not change %s (it may change %s only)", strings.Join(bad, ", "), strings.Join(allowed, ", "))
}

// envSources names the env entries that take their value from elsewhere (Secrets, ConfigMaps,
// the pod): a server may never set those.
func envSources(env []corev1.EnvVar) []string {
	var out []string
	for i, e := range env {
		if e.ValueFrom != nil {
			out = append(out, fmt.Sprintf("spec.env[%d].valueFrom", i))
		}
	}
	return out
}

// changedMeta names the labels or annotations in mine (except the managed label) that base does
// not have with the same value.
func changedMeta(what string, mine, base map[string]string) []string {
	var out []string
	for k, v := range mine {
		if what == "labels" && k == ManagedLabel {
			continue
		}
		if w, ok := base[k]; !ok || w != v {
			out = append(out, fmt.Sprintf("metadata.%s[%s]", what, k))
		}
	}
	sort.Strings(out)
	return out
}

// asMap turns a typed value into its JSON form, so that fields compare as the API server stores
// them (quantities canonical, omitted zero values absent on both sides).
func asMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
