// Package inject holds the rules shared by every injection annotation (the collector sidecar's
// sidecar.opentelemetry.io/inject and instrumentation.opentelemetry.io/inject-<language>): how a
// pod's value and its namespace's value combine, and how a value names an object. Pure.
package inject

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Resolve returns the annotation value that decides for a pod, from the pod's and its namespace's
// values ("" when absent). The pod decides when it says "false" or names an object; a pod that
// only says "true" takes the object its namespace names; a pod without the annotation follows its
// namespace.
func Resolve(podValue, nsValue string) string {
	podValue, nsValue = strings.TrimSpace(podValue), strings.TrimSpace(nsValue)
	switch {
	case podValue == "":
		return nsValue
	case !IsTrue(podValue):
		return podValue
	case nsValue == "" || IsTrue(nsValue) || IsFalse(nsValue):
		return podValue
	default:
		return nsValue
	}
}

// NeedsNamespace reports whether Resolve may need the namespace's value: only when the pod's own
// value is absent or "true".
func NeedsNamespace(podValue string) bool {
	podValue = strings.TrimSpace(podValue)
	return podValue == "" || IsTrue(podValue)
}

// IsTrue reports whether value is "true", in any case.
func IsTrue(value string) bool { return strings.EqualFold(strings.TrimSpace(value), "true") }

// IsFalse reports whether value is "false", in any case.
func IsFalse(value string) bool { return strings.EqualFold(strings.TrimSpace(value), "false") }

// Target parses a value that names an object ("<name>" or "<ns>/<name>"); a bare name is looked
// up in podNamespace. key is the annotation, for the error message.
func Target(key, value, podNamespace string) (types.NamespacedName, error) {
	value = strings.TrimSpace(value)
	ns, name, qualified := strings.Cut(value, "/")
	if !qualified {
		ns, name = podNamespace, value
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("%s=%q is neither true, false, <name> nor <namespace>/<name>", key, value)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// AllowsNamespace reports whether an object of ownerNamespace whose allowed-namespaces annotation
// is allowed (comma-separated namespaces, or "*" for every namespace; "" for none) may be used by
// pods of podNamespace. An object always serves its own namespace; another namespace must consent
// (the sidecar's sidecar.opentelemetry.io/allowed-namespaces, the Instrumentation's
// instrumentation.opentelemetry.io/allowed-namespaces), because what is injected carries the
// object's settings, credentials included, into the pod.
func AllowsNamespace(ownerNamespace, allowed, podNamespace string) bool {
	if ownerNamespace == podNamespace {
		return true
	}
	for _, ns := range strings.Split(allowed, ",") {
		if ns = strings.TrimSpace(ns); ns == "*" || (ns != "" && ns == podNamespace) {
			return true
		}
	}
	return false
}
