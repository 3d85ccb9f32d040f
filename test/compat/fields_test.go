package compat

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	upv1alpha1 "github.com/open-telemetry/opentelemetry-operator/apis/v1alpha1"
	upv1beta1 "github.com/open-telemetry/opentelemetry-operator/apis/v1beta1"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

// kinds pairs every served upstream kind with ours.
var kinds = []struct {
	name     string
	upstream any
	ours     any
}{
	{"v1beta1.OpenTelemetryCollector", upv1beta1.OpenTelemetryCollector{}, v1beta1.OpenTelemetryCollector{}},
	{"v1alpha1.OpenTelemetryCollector", upv1alpha1.OpenTelemetryCollector{}, v1alpha1.OpenTelemetryCollector{}},
	{"v1alpha1.Instrumentation", upv1alpha1.Instrumentation{}, v1alpha1.Instrumentation{}},
	{"v1alpha1.OpAMPBridge", upv1alpha1.OpAMPBridge{}, v1alpha1.OpAMPBridge{}},
	{"v1alpha1.TargetAllocator", upv1alpha1.TargetAllocator{}, v1alpha1.TargetAllocator{}},
	{"v1alpha1.ClusterObservability", upv1alpha1.ClusterObservability{}, v1alpha1.ClusterObservability{}},
}

// additions are field paths (and everything below them) that only our types have, on purpose:
// status the operator reports beyond upstream, and security settings upstream lacks. Each is documented in docs/differences.md.
var additions = map[string][]string{
	"v1alpha1.Instrumentation": {"status.workloads"}, // the catch-up controller's workload counts
	// The catch-up controller's counts of workloads running an outdated or missing sidecar.
	"v1beta1.OpenTelemetryCollector": {"status.sidecars"},
	// The bridge's proxy TLS, token and message limit, and its namespace scoping.
	"v1alpha1.OpAMPBridge": {"spec.proxyServer", "spec.namespaces"},
}

// added reports whether path is one of kind's additions or below one.
func added(kind, path string) bool {
	for _, a := range additions[kind] {
		if path == a || strings.HasPrefix(path, a+".") || strings.HasPrefix(path, a+"[]") {
			return true
		}
	}
	return false
}

// TestEveryUpstreamFieldExists walks upstream's types and ours by reflection and checks that
// every JSON field path upstream has exists in ours with a compatible shape. Types from
// Kubernetes modules (core/v1 and friends) are leaves compared by identity.
func TestEveryUpstreamFieldExists(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			up := fieldPaths(reflect.TypeOf(k.upstream))
			ours := fieldPaths(reflect.TypeOf(k.ours))
			var missing, mismatched, extra []string
			for p, shape := range up {
				got, ok := ours[p]
				switch {
				case !ok:
					missing = append(missing, p)
				case got != shape:
					mismatched = append(mismatched, p+": upstream "+shape+", ours "+got)
				}
			}
			for p := range ours {
				if _, ok := up[p]; !ok && !added(k.name, p) {
					extra = append(extra, p)
				}
			}
			sort.Strings(missing)
			sort.Strings(mismatched)
			sort.Strings(extra)
			if len(missing) > 0 {
				t.Errorf("%d upstream field paths missing:\n  %s", len(missing), strings.Join(missing, "\n  "))
			}
			if len(mismatched) > 0 {
				t.Errorf("%d field paths with a different shape:\n  %s", len(mismatched), strings.Join(mismatched, "\n  "))
			}
			if len(extra) > 0 {
				t.Errorf("%d field paths only in ours:\n  %s", len(extra), strings.Join(extra, "\n  "))
			}
			t.Logf("%d field paths compared", len(up))
		})
	}
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// fieldPaths maps each JSON path of t (like spec.targetAllocator.prometheusCR.enabled, with []
// for list items and {} for map values) to a description of its shape.
func fieldPaths(t reflect.Type) map[string]string {
	out := map[string]string{}
	walk(t, "", out)
	return out
}

func walk(t reflect.Type, path string, out map[string]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	shape := shapeOf(t)
	if path != "" {
		out[path] = shape
	}
	if !ownType(t) || implementsMarshaler(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, inline, skip := jsonName(f)
			if skip {
				continue
			}
			if inline {
				walk(f.Type, path, out)
				continue
			}
			walk(f.Type, join(path, name), out)
		}
	case reflect.Slice, reflect.Array:
		walk(t.Elem(), path+"[]", out)
	case reflect.Map:
		walk(t.Elem(), path+"{}", out)
	}
}

// ownType reports whether t is defined by upstream's or our API packages (walked into) rather
// than by Kubernetes or the standard library (compared as a leaf).
func ownType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return true
	}
	p := t.PkgPath()
	return strings.Contains(p, "opentelemetry-operator/apis") || strings.Contains(p, "otelop/otelop/api")
}

func implementsMarshaler(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)
}

// shapeOf describes a type independently of which module defines it: the JSON kind for our
// and upstream's types, the full type name for everything else.
func shapeOf(t reflect.Type) string {
	if !ownType(t) {
		return t.String()
	}
	if implementsMarshaler(t) {
		return "custom-json"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map:
		return "map[" + t.Key().Kind().String() + "]"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	default:
		return t.Kind().String()
	}
}

// jsonName returns a field's JSON name, whether it is inlined, and whether JSON skips it.
func jsonName(f reflect.StructField) (name string, inline, skip bool) {
	tag, hasTag := f.Tag.Lookup("json")
	if tag == "-" || (!f.IsExported() && !f.Anonymous) {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
		return "", true, false
	}
	if strings.Contains(opts, "inline") {
		return "", true, false
	}
	if !hasTag || name == "" {
		name = f.Name
	}
	return name, false, false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
