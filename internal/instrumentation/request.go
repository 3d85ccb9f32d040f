package instrumentation

import (
	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/inject"
)

// Language is an auto-instrumentation kind, as it appears in the annotation names.
type Language string

// The languages, named as in upstream's annotations.
const (
	Java        Language = "java"
	NodeJS      Language = "nodejs"
	Python      Language = "python"
	DotNet      Language = "dotnet"
	Go          Language = "go"
	ApacheHttpd Language = "apache-httpd"
	Nginx       Language = "nginx"
	SDK         Language = "sdk"
)

// Languages lists every language, alphabetically (Inject applies them in upstream's order).
var Languages = []Language{ApacheHttpd, DotNet, Go, Java, Nginx, NodeJS, Python, SDK}

// AnnotationPrefix starts every instrumentation annotation.
const AnnotationPrefix = "instrumentation.opentelemetry.io/"

// InjectAnnotation is the annotation that asks for lang, on a pod (template) or its namespace.
// Values: "true" (the one Instrumentation of the pod's namespace), "false", "<name>" and
// "<namespace>/<name>".
func InjectAnnotation(lang Language) string { return AnnotationPrefix + "inject-" + string(lang) }

// AllowedNamespacesAnnotation is set on an Instrumentation: it lists the other namespaces whose
// pods may name it as "<namespace>/<name>" (comma-separated, or "*" for every namespace), like the
// sidecar's sidecar.opentelemetry.io/allowed-namespaces. Without it only pods of the
// Instrumentation's own namespace get it: what it injects (its env, API-key headers included,
// endpoint and images) runs in the pod, so a tenant must not be able to take another's, nor put
// its code into another's pods, without that tenant's consent.
const AllowedNamespacesAnnotation = AnnotationPrefix + "allowed-namespaces"

// AllowsNamespace reports whether pods of namespace may use inst.
func AllowsNamespace(inst *v1alpha1.Instrumentation, namespace string) bool {
	return inject.AllowsNamespace(inst.Namespace, inst.Annotations[AllowedNamespacesAnnotation], namespace)
}

// Request is one language a pod asks for, with the value that decides which Instrumentation.
type Request struct {
	Language Language
	// Value is "true" or names an Instrumentation ("<name>" or "<namespace>/<name>"); never "false"
	// or empty.
	Value string
}

// Requests returns the languages the pod annotations podAnn ask for, combined with its namespace's
// annotations nsAnn as for the sidecar annotation (inject.Resolve), in Languages order. A language
// resolved to "false" is not requested.
func Requests(podAnn, nsAnn map[string]string) []Request {
	var out []Request
	for _, lang := range Languages {
		key := InjectAnnotation(lang)
		v := inject.Resolve(podAnn[key], nsAnn[key])
		if v == "" || inject.IsFalse(v) {
			continue
		}
		out = append(out, Request{Language: lang, Value: v})
	}
	return out
}

// NeedsNamespace reports whether Requests may need the namespace's annotations for podAnn: when
// some language is absent from the pod or says only "true".
func NeedsNamespace(podAnn map[string]string) bool {
	for _, lang := range Languages {
		if inject.NeedsNamespace(podAnn[InjectAnnotation(lang)]) {
			return true
		}
	}
	return false
}
