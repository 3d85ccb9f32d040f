// Package collectors is the bridge's view of OpenTelemetryCollector resources: it discovers the
// collectors labelled for the bridge through filtered informers, renders their effective
// configuration, applies remote configuration to them (creating new ones, applying existing ones
// server-side under the bridge's own field manager) within what a server may change (allow.go),
// deletes only collectors this bridge created, and restarts managed workloads at a bounded rate.
// The rules (keys, label gating, allowed components) are pure functions in this file.
package collectors

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations, as upstream's.
const (
	// ManagedLabel marks a collector the bridge may change: the bridge's name, or "true" for the
	// bridges of the collector's own namespace.
	ManagedLabel = "opentelemetry.io/opamp-managed"
	// ReportingLabel ("true") marks a collector the bridge only reports on.
	ReportingLabel = "opentelemetry.io/opamp-reporting"
	// CreatedByLabel is set to CreatedByValue on collectors the bridge creates.
	CreatedByLabel = "created-by"
	// CreatedByValue is the value of CreatedByLabel.
	CreatedByValue = "operator-opamp-bridge"
	// BridgeAnnotation records which bridge ("<namespace>/<name>") created a collector, so that a
	// bridge deletes only its own creations.
	BridgeAnnotation = "opentelemetry.io/opamp-bridge"
	// FieldManager is the bridge's server-side apply field manager.
	FieldManager = "operator-opamp-bridge"
)

// Key names one collector: "namespace/name" on the wire.
type Key struct {
	Namespace string
	Name      string
}

// String returns "namespace/name".
func (k Key) String() string { return k.Namespace + "/" + k.Name }

// ParseKey parses "namespace/name", checking both parts are valid Kubernetes names.
func ParseKey(s string) (Key, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(name, "/") {
		return Key{}, fmt.Errorf("key %q: want namespace/name", s)
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return Key{}, fmt.Errorf("key %q: namespace: %s", s, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return Key{}, fmt.Errorf("key %q: name: %s", s, strings.Join(msgs, "; "))
	}
	return Key{Namespace: ns, Name: name}, nil
}

// Bridge names a bridge: the namespace it runs in and its name.
type Bridge struct {
	Namespace string
	Name      string
}

// CheckManaged returns an error unless labels allow bridge b to change a collector in namespace
// ns: opamp-managed must name the bridge, or be "true" with the collector in the bridge's own
// namespace ("true" does not give a collector to every bridge of the cluster), and
// opamp-reporting must not be "true". what says which object is meant ("the existing
// collector", "the new configuration").
func CheckManaged(labels map[string]string, b Bridge, ns, what string) error {
	if labels[ReportingLabel] == "true" {
		return fmt.Errorf("%s is labelled %s=true (report only) and cannot be changed", what, ReportingLabel)
	}
	switch v := labels[ManagedLabel]; {
	case v == b.Name:
		return nil
	case v == "true" && ns == b.Namespace:
		return nil
	case v == "true":
		return fmt.Errorf("%s is labelled %s=true, which gives it to the bridges of its own namespace only; label it %s=%s for the bridge %s/%s",
			what, ManagedLabel, ManagedLabel, b.Name, b.Namespace, b.Name)
	default:
		return fmt.Errorf("%s lacks the label %s=%s (or %s=true in the bridge's namespace %s)", what, ManagedLabel, b.Name, ManagedLabel, b.Namespace)
	}
}

// ComponentKinds are the sections of a collector configuration componentsAllowed restricts.
var ComponentKinds = []string{"receivers", "processors", "exporters", "connectors", "extensions"}

// CheckComponents returns an error listing every component of config (the collector's spec.config
// as a map) that allowed does not permit. An empty allowed permits everything. Otherwise a
// section missing from allowed permits nothing, and an entry permits a component whose ID is
// either exactly the entry ("otlp/2") or has the entry as its type ("otlp" allows "otlp/2").
func CheckComponents(config map[string]any, allowed map[string][]string) error {
	if len(allowed) == 0 {
		return nil
	}
	var bad []string
	for _, kind := range ComponentKinds {
		section, _ := config[kind].(map[string]any)
		for id := range section {
			if !componentAllowed(id, allowed[kind]) {
				bad = append(bad, kind+"."+id)
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("components not allowed by componentsAllowed: %s", strings.Join(bad, ", "))
}

func componentAllowed(id string, allowed []string) bool {
	typ, _, _ := strings.Cut(id, "/")
	for _, a := range allowed {
		if a == id || a == typ {
			return true
		}
	}
	return false
}

// joinErrors joins errors sorted by message, so reports are stable.
func joinErrors(errs []error) error {
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}
